#include "strategies/backward_split.hpp"

#include <gtest/gtest.h>

#include "hardware/roofline_cost_model.hpp"

using namespace infraplan;
using namespace infraplan::strat;

namespace {

double sum(const std::vector<OpTemplate>& ops, bool flops) {
  double s = 0;
  for (const auto& o : ops)
    if (o.stream == Stream::Compute) s += flops ? o.flops : o.seconds;
  return s;
}

double gemm_flops(const std::vector<OpTemplate>& ops) {
  double s = 0;
  for (const auto& o : ops)
    if (o.stream == Stream::Compute && std::string(o.name).find("attention") == std::string::npos) s += o.flops;
  return s;
}

}  // namespace

// The weight gradient of every GEMM costs what its forward costs (2·tokens·weights FLOPs), so the
// W part of a layer's backward carries exactly the forward's GEMM FLOPs, and B + W is the whole.
TEST(BackwardSplit, WeightPartCarriesTheForwardGemmFlops) {
  for (const char* name : {"llama3-8b", "gpt3-175b", "mixtral-8x7b"})
    for (auto prec : {Precision::BF16Mixed, Precision::AmpBF16}) {
      const auto m = model::preset(name);
      if (m.moe.enabled() && prec == Precision::AmpBF16) continue;
      TrainingConfig t;
      t.seq_len = 2048, t.tp = 4, t.sp = true, t.dp = 1, t.global_batch = 1, t.precision = prec;
      if (m.moe.enabled()) t.ep = 1;
      hw::RooflineCostModel cost(hw::find_gpu("h100-sxm5-80gb"));
      OpContext ctx(m, t, cost);
      const std::int64_t layer = m.layers - 1;
      const auto f = layer_forward_ops(ctx, layer);
      const auto b = layer_backward_ops(ctx, layer);
      const auto s = split_backward(b);
      EXPECT_NEAR(sum(s.weight, true), gemm_flops(f), 1e-6 * gemm_flops(f)) << name;
      EXPECT_NEAR(sum(s.input, false) + sum(s.weight, false), sum(b, false), 1e-9 * sum(b, false)) << name;
      EXPECT_GT(sum(s.input, false), 0);
      // Dependencies stay inside the template and point backwards.
      for (std::size_t i = 0; i < s.input.size(); ++i) {
        EXPECT_TRUE(s.input[i].explicit_deps);
        for (int d : s.input[i].deps) EXPECT_LT(std::size_t(d), i);
      }
    }
}

TEST(BackwardSplit, HeadAndEmbedding) {
  const auto m = model::preset("llama3-8b");
  TrainingConfig t;
  t.seq_len = 4096, t.tp = 2, t.dp = 1, t.global_batch = 1;
  hw::RooflineCostModel cost(hw::find_gpu("h100-sxm5-80gb"));
  OpContext ctx(m, t, cost);
  const auto head = split_backward(head_backward_ops(ctx));
  ASSERT_EQ(head.weight.size(), 1u);
  EXPECT_STREQ(head.weight[0].name, "lm_head_wgrad");
  const auto emb = split_backward(embedding_backward_ops(ctx));
  EXPECT_TRUE(emb.input.empty() || sum(emb.input, false) == 0);
  EXPECT_GT(sum(emb.weight, false), 0);
}

// The host reference model: deterministic, causal, and sensitive to what it should be.
#include "engine/reference_model.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "common/error.hpp"

using namespace infraplan::engine;

namespace {
LlamaConfig small(int heads, int kv_heads) {
  LlamaConfig c;
  c.name = "ref-small";
  c.layers = 2;
  c.hidden = 64;
  c.heads = heads;
  c.kv_heads = kv_heads;
  c.ffn = 128;
  c.vocab = 97;
  c.max_seq = 32;
  return c;
}
std::vector<std::vector<float>> run(const ReferenceModel& m, const std::vector<int>& toks) {
  auto st = m.new_state();
  std::vector<std::vector<float>> out;
  for (int t : toks) out.push_back(m.step(st, t));
  return out;
}
double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::abs(a[i] - b[i])));
  return d;
}
}  // namespace

TEST(ReferenceModel, DeterministicAndCausal) {
  const LlamaConfig c = small(2, 1);
  const ReferenceModel m(c, WeightLayout(c).random_host(5));
  const auto a = run(m, {3, 14, 15, 92, 65});
  const auto b = run(m, {3, 14, 15, 92, 65});
  ASSERT_EQ(a.size(), 5u);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]);
  // Changing the last token changes only the last logits (causality).
  const auto d = run(m, {3, 14, 15, 92, 66});
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(a[i], d[i]) << i;
  EXPECT_GT(max_abs_diff(a[4], d[4]), 1e-3);
  // Changing an earlier token changes later logits (attention reaches back).
  const auto e = run(m, {4, 14, 15, 92, 65});
  EXPECT_GT(max_abs_diff(a[4], e[4]), 1e-3);
  // Logits are finite and spread (the LM head's gain), not a constant.
  double lo = 1e9, hi = -1e9;
  for (float x : a[4]) {
    ASSERT_TRUE(std::isfinite(x));
    lo = std::min(lo, double(x));
    hi = std::max(hi, double(x));
  }
  EXPECT_GT(hi - lo, 2.0);
}

TEST(ReferenceModel, PositionMattersThroughRope) {
  // Without positions, attention of the last query over the keys {3, 7, 9} would not depend on
  // their order; with rotary embeddings it does.
  const LlamaConfig c = small(4, 2);
  const ReferenceModel m(c, WeightLayout(c).random_host(9));
  const auto a = run(m, {3, 7, 9}), b = run(m, {7, 3, 9});
  EXPECT_GT(max_abs_diff(a[2], b[2]), 1e-4);
  // Identical tokens everywhere: every value is the same, so the output is too, whatever the
  // positions (a check of the attention average itself).
  const auto d = run(m, {7, 7, 7});
  EXPECT_LT(max_abs_diff(d[1], d[2]), 1e-6);
}

TEST(ReferenceModel, RefusesBadInput) {
  const LlamaConfig c = small(2, 2);
  const ReferenceModel m(c, WeightLayout(c).random_host(1));
  auto st = m.new_state();
  EXPECT_THROW(m.step(st, 97), infraplan::Error);
  EXPECT_THROW(ReferenceModel(c, std::vector<std::uint16_t>(10)), infraplan::Error);
}

#include "model/model_math.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "common/error.hpp"

using namespace infraplan;
using namespace infraplan::model;

namespace {
constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

ModelSpec llama7b_shaped() {
  ModelSpec m;
  m.name = "llama-7b-shaped";
  m.hidden = 4096;
  m.layers = 32;
  m.heads = 32;
  m.kv_heads = 32;
  m.head_dim = 128;
  m.ffn_hidden = 11008;
  m.vocab = 32000;
  m.tied_embeddings = false;
  return m;
}
}  // namespace

// Roadmap 0.3: hidden 4096, 32 heads, 32 layers, SwiGLU 11008, vocab 32000 → ≈ 6.7B.
TEST(ModelMath, Llama7bShapedHas674BParameters) {
  auto b = count_params(llama7b_shaped());
  EXPECT_NEAR(b.total / 1e9, 6.74, 0.005);
  EXPECT_DOUBLE_EQ(b.embedding, 32000.0 * 4096);
  EXPECT_DOUBLE_EQ(b.lm_head, 32000.0 * 4096);
  EXPECT_DOUBLE_EQ(b.attention, 4.0 * 4096 * 4096 * 32);
  EXPECT_DOUBLE_EQ(b.mlp, 3.0 * 4096 * 11008 * 32);
  EXPECT_DOUBLE_EQ(b.norm, 2.0 * 4096 * 32 + 4096);
  EXPECT_DOUBLE_EQ(b.total, b.active_per_token);
}

TEST(ModelMath, TiedEmbeddingsDropTheLmHead) {
  auto m = llama7b_shaped();
  m.tied_embeddings = true;
  auto b = count_params(m);
  EXPECT_EQ(b.lm_head, 0);
  EXPECT_NEAR(b.total, count_params(llama7b_shaped()).total - 32000.0 * 4096, 1);
}

// Roadmap 2.3 and 3.1: fp16 weights ≈ 13.5 GB, 12 B/param Adam state ≈ 81 GB.
TEST(ModelMath, Llama2_7bWeightAndOptimizerBytes) {
  auto b = count_params(preset("llama2-7b"));
  EXPECT_NEAR(b.total * 2 / 1e9, 13.5, 0.1);
  EXPECT_NEAR(b.total * 12 / 1e9, 81, 0.5);
  EXPECT_GT(b.total * 12, 80e9);  // one 80 GB card cannot hold it
}

// Roadmap 3.1: 2 × 32 × 32 × 128 × 4096 × 16 × 2 B = 32 GiB.
TEST(ModelMath, Llama2_7bKvCache) {
  auto m = preset("llama2-7b");
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, Dtype::FP16), 2.0 * 32 * 32 * 128 * 2);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, Dtype::FP16) * 4096 * 16, 32 * GiB);
  // Roadmap 3.5: one 2048-token sequence ≈ 1 GB.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, Dtype::FP16) * 2048, 1 * GiB);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, Dtype::FP8), kv_bytes_per_token(m, Dtype::FP16) / 2);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, Dtype::INT4), kv_bytes_per_token(m, Dtype::FP16) / 4);
}

TEST(ModelMath, GqaAndMlaShrinkTheKvCache) {
  // llama3-70b: 80 layers × 8 KV heads × 128 × 2 (K,V) × 2 B = 320 KiB per token.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(preset("llama3-70b"), Dtype::BF16), 80.0 * 8 * 128 * 2 * 2);
  // deepseek-v3 caches the 512-wide latent plus the 64-wide rope key: 61 × 576 × 2 B.
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(preset("deepseek-v3"), Dtype::BF16), 61.0 * 576 * 2);
}

TEST(ModelMath, PublishedParameterCounts) {
  struct Case {
    const char* name;
    double total_b, active_b, tol;
  } cases[] = {
      {"gpt3-175b", 175, 175, 1.5},       {"llama2-7b", 6.74, 6.74, 0.02},   {"llama2-13b", 13.0, 13.0, 0.1},
      {"llama2-70b", 69.0, 69.0, 0.3},    {"llama3-8b", 8.03, 8.03, 0.02},   {"llama3-70b", 70.6, 70.6, 0.2},
      {"llama3-405b", 405.9, 405.9, 1.0}, {"mixtral-8x7b", 46.7, 12.9, 0.1}, {"deepseek-v3", 671, 37, 2},
      {"qwen2.5-7b", 7.62, 7.62, 0.02},
  };
  for (const auto& c : cases) {
    auto b = count_params(preset(c.name));
    EXPECT_NEAR(b.total / 1e9, c.total_b, c.tol) << c.name;
    EXPECT_NEAR(b.active_per_token / 1e9, c.active_b, c.tol) << c.name;
  }
}

TEST(ModelMath, FlopsPerTokenIsTwiceActiveParamsPlusAttention) {
  auto m = preset("llama2-7b");
  auto b = count_params(m);
  double dense = dense_forward_flops_per_token(m);
  EXPECT_NEAR(dense, 2 * (b.total - b.embedding - b.norm), 1);
  // Non-causal attention term: 4 · L · a · d · S  (QKᵀ and PV).
  double full = forward_flops_per_token(m, 4096, false);
  EXPECT_NEAR(full - dense, 4.0 * 32 * 32 * 128 * 4096, 1);
  double causal = forward_flops_per_token(m, 4096, true);
  EXPECT_NEAR(causal - dense, 4.0 * 32 * 32 * 128 * 4097.0 / 2, 1);
  EXPECT_DOUBLE_EQ(training_flops_per_token(m, 4096), 3 * causal);
  // MoE: only active experts count.
  auto mx = preset("mixtral-8x7b");
  EXPECT_LT(dense_forward_flops_per_token(mx), 2 * count_params(mx).total * 0.35);
}

// Korthikanti et al. 2022, Table 2: GPT shapes, MHA, dropout, no FlashAttention.
TEST(ModelMath, ActivationsMatchKorthikanti) {
  auto m = preset("gpt3-175b");
  const double s = 2048, b = 1, h = 12288, a = 96;
  ActivationOptions o;
  o.flash_attention = false;
  o.dropout = true;
  EXPECT_NEAR(activation_bytes_per_layer(m, 2048, 1, o), s * b * h * (34 + 5 * a * s / h), 1);
  o.tp = 8;
  EXPECT_NEAR(activation_bytes_per_layer(m, 2048, 1, o), s * b * h * (10 + 24.0 / 8 + 5 * a * s / (h * 8)),
              1);
  o.sp = true;
  EXPECT_NEAR(activation_bytes_per_layer(m, 2048, 1, o), s * b * h / 8 * (34 + 5 * a * s / h), 1);
  o.recompute = Recompute::Selective;
  EXPECT_NEAR(activation_bytes_per_layer(m, 2048, 1, o), s * b * h / 8 * 34, 1);
  o.recompute = Recompute::Full;
  EXPECT_NEAR(activation_bytes_per_layer(m, 2048, 1, o), 2 * s * b * h / 8, 1);
}

TEST(ModelMath, ActivationsScaleWithBatchAndShrinkWithCp) {
  auto m = preset("llama3-8b");
  ActivationOptions o;
  double one = activation_bytes_per_layer(m, 8192, 1, o);
  EXPECT_NEAR(activation_bytes_per_layer(m, 8192, 4, o), 4 * one, 1);
  o.cp = 2;
  EXPECT_NEAR(activation_bytes_per_layer(m, 8192, 1, o), one / 2, 1);
  o.cp = 1;
  o.recompute = Recompute::Full;
  EXPECT_LT(activation_bytes_per_layer(m, 8192, 1, o), one / 5);
}

TEST(ModelMath, RecomputeNames) {
  EXPECT_EQ(parse_recompute("selective", "training.recompute"), Recompute::Selective);
  EXPECT_EQ(parse_recompute("selective-op", "training.recompute"), Recompute::SelectiveOp);
  EXPECT_STREQ(recompute_name(Recompute::SelectiveOp), "selective-op");
  try {
    parse_recompute("partial", "training.recompute");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("none, selective, selective-op, full"), std::string::npos);
  }
}

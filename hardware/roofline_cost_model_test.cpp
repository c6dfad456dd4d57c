#include "hardware/roofline_cost_model.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

using namespace infraplan;
using namespace infraplan::hw;

TEST(Roofline, LargeGemmIsComputeBound) {
  RooflineCostModel cm(find_gpu("h100-sxm5-80gb"), 0);
  auto e = cm.gemm({8192, 8192, 8192, Dtype::BF16});
  EXPECT_NEAR(e.seconds, 2.0 * 8192 * 8192 * 8192 / 989.4e12, 1e-9);
  EXPECT_EQ(e.source, CostSource::Roofline);
  EXPECT_NE(e.detail.find("compute-bound"), std::string::npos);
  // fp8 doubles the peak.
  EXPECT_NEAR(cm.gemm({8192, 8192, 8192, Dtype::FP8}).seconds, e.seconds / 2, e.seconds * 1e-3);
}

TEST(Roofline, DecodeGemvIsMemoryBound) {
  RooflineCostModel cm(find_gpu("h200-sxm-141gb"), 0);
  auto e = cm.gemm({1, 4096, 4096, Dtype::BF16});
  EXPECT_NE(e.detail.find("memory-bound"), std::string::npos);
  EXPECT_NEAR(e.seconds, gemm_min_bytes({1, 4096, 4096, Dtype::BF16}) / 4.8e12, 1e-12);
  // INT4 weights halve the bytes of INT8 at batch 1.
  EXPECT_LT(cm.gemm({1, 8192, 8192, Dtype::INT4}).seconds, cm.gemm({1, 8192, 8192, Dtype::INT8}).seconds);
}

TEST(Roofline, AttentionFlopsAndBytes) {
  AttentionPrefillShape p{1, 8192, 8192, 32, 32, 128, true, Dtype::BF16};
  EXPECT_NEAR(p.flops(), 4.0 * 32 * 128 * 8192.0 * 8193 / 2, 1);
  AttentionDecodeShape d{32, 32 * 2048, 32, 8, 128, Dtype::BF16};
  EXPECT_DOUBLE_EQ(d.kv_bytes(), 2.0 * 32 * 2048 * 8 * 128 * 2);
  RooflineCostModel cm(find_gpu("h100-sxm5-80gb"));
  EXPECT_GT(cm.attention_decode(d).seconds, d.kv_bytes() / 3.35e12);
  EXPECT_THROW(cm.attention_prefill({1, 10, 5, 1, 1, 64, true, Dtype::BF16}), Error);
}

TEST(Roofline, UnsupportedDtypeIsRefused) {
  RooflineCostModel cm(find_gpu("a100-sxm4-80gb"));
  try {
    cm.gemm({128, 128, 128, Dtype::FP8});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a100-sxm4-80gb has no tensor-core support for fp8"),
              std::string::npos);
  }
  EXPECT_THROW(cm.gemm({0, 1, 1, Dtype::BF16}), Error);
  EXPECT_THROW(cm.memory_bound(-1), Error);
}

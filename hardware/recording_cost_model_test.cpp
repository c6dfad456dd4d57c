#include "hardware/recording_cost_model.hpp"

#include <gtest/gtest.h>

#include "hardware/roofline_cost_model.hpp"

namespace infraplan::hw {
namespace {

GemmShape gemm(std::int64_t m, std::int64_t n, std::int64_t k, Dtype d, std::int64_t batch = 1) {
  GemmShape s;
  s.m = m, s.n = n, s.k = k, s.dtype = d, s.batch = batch;
  return s;
}

TEST(RecordingCostModel, KeepsDistinctShapesWithCallsAndTime) {
  RooflineCostModel inner(find_gpu("h200-sxm-141gb"));
  RecordingCostModel rec(inner);
  const GemmShape big = gemm(8192, 8192, 8192, Dtype::BF16), small = gemm(16, 4096, 4096, Dtype::BF16);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(rec.gemm(small).seconds, inner.gemm(small).seconds);
  rec.gemm(big);
  rec.gemm(gemm(16, 4096, 4096, Dtype::FP8, 4));  // same sizes, another format: its own entry
  AttentionDecodeShape dec;
  dec.batch = 8, dec.heads = 32, dec.kv_heads = 8, dec.head_dim = 128, dec.total_context_tokens = 8 * 4096;
  EXPECT_EQ(rec.attention_decode(dec).seconds, inner.attention_decode(dec).seconds);
  EXPECT_EQ(rec.distinct_shapes(), 3u);
  Json j = rec.shapes_json();
  const Json& a = j["gemm_shapes"];
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0]["m"], 8192);  // the largest total time first
  double prev = 1e30;
  for (const auto& e : a) {
    EXPECT_LE(e["predicted_seconds"].get<double>(), prev);
    prev = e["predicted_seconds"].get<double>();
  }
  for (const auto& e : a) {
    if (e["dtype"] == "bf16" && e["m"] == 16) {
      EXPECT_EQ(e["calls"], 3.0);
      EXPECT_NEAR(e["predicted_seconds"].get<double>(), 3 * inner.gemm(small).seconds, 1e-15);
    }
    if (e["dtype"] == "fp8") {
      EXPECT_EQ(e["calls"], 4.0);
    }
  }
}

}  // namespace
}  // namespace infraplan::hw

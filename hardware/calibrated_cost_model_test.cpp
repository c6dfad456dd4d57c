#include "hardware/calibrated_cost_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json_util.hpp"
#include "hardware/framework_costs.hpp"
#include "hardware/roofline_cost_model.hpp"

namespace infraplan::hw {
namespace {

const CalibratedCostModel& h200() {
  static const auto cm = make_calibrated_cost_model("h200-sxm-141gb");
  return *cm;
}

GemmShape gemm(std::int64_t m, std::int64_t n, std::int64_t k, Dtype d = Dtype::BF16) {
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.dtype = d;
  return s;
}

// The tables reproduce their own cells, times the fleet scale (the profile's exact workload shapes
// and rows aside: some sit on grid points, measured at another moment or on other machines).
TEST(CalibratedCostModel, ExactAtGemmGridPoints) {
  const Profile& p = h200().profile();
  for (Dtype d : {Dtype::BF16, Dtype::FP8, Dtype::INT8, Dtype::TF32}) {
    const GemmTable* t = p.gemm_table(d);
    ASSERT_NE(t, nullptr);
    for (std::size_t i = 0; i < t->m.size(); i += 3)
      for (std::size_t j = 0; j < t->n.size(); j += 2)
        for (std::size_t l = 0; l < t->k.size(); l += 2) {
          double want = t->at(i, j, l) * h200().timing_ratio(t->at(i, j, l)) * t->fleet_scale;
          if (!(want > 0)) continue;
          const GemmShape g = gemm(std::int64_t(t->m[i]), std::int64_t(t->n[j]), std::int64_t(t->k[l]), d);
          if (gemm_min_bytes(g) >= h200().gpu().l2_bytes)  // never faster than the measured streaming
            want = std::max(want, gemm_min_bytes(g) / h200().gemm_stream_Bps(d));
          CostEstimate e = h200().gemm_from_grid(g);
          EXPECT_NEAR(e.seconds, want, want * 1e-9);
          EXPECT_EQ(e.source, CostSource::Measured);
        }
  }
}

// Aligned sizes (multiples of 64): time grows with every dimension. (Unaligned sizes are
// slower than their aligned neighbours, so across alignment classes time is not monotone.)
TEST(CalibratedCostModel, GemmGrowsWithLargeSizes) {
  auto r64 = [](std::int64_t x) { return (x + 63) / 64 * 64; };
  for (Dtype d : {Dtype::BF16, Dtype::FP8, Dtype::TF32}) {
    for (std::int64_t base : {2048, 8192}) {
      double prev = 0;
      for (std::int64_t m = 512; m <= 32768; m = m * 3 / 2) {
        double t = h200().gemm(gemm(m, base, base, d)).seconds;
        EXPECT_GE(t, prev * 0.97) << dtype_name(d) << " m=" << m;  // measurement noise and wave effects
        prev = t;
      }
      for (auto dim : {1, 2}) {
        prev = 0;
        for (std::int64_t x = 512; x <= 32768; x = x * 3 / 2) {
          double t = dim == 1 ? h200().gemm(gemm(base, r64(x), base, d)).seconds
                              : h200().gemm(gemm(base, base, r64(x), d)).seconds;
          EXPECT_GE(t, prev * 0.97) << dtype_name(d) << (dim == 1 ? " n=" : " k=") << r64(x);
          prev = t;
        }
      }
    }
  }
}

TEST(CalibratedCostModel, UnalignedRowsCostTheMeasuredRatio) {
  CostEstimate al = h200().gemm(gemm(4096, 4096, 4096));
  CostEstimate odd = h200().gemm(gemm(4096, 4097, 4097));
  EXPECT_GT(odd.seconds, 1.5 * al.seconds);
  EXPECT_NE(odd.detail.find("n, k multiples of 1 element only"), std::string::npos) << odd.detail;
}

// Exact workload shapes (tables.gemm_shapes) answer their own shape, each pass referred to the
// reference clock; other shapes, formats and batches behave as before.
TEST(CalibratedCostModel, ExactShapesAnswerTheirShape) {
  Json j = parse_json_text(default_profile_json("h200-sxm-141gb"), "h200");
  const double ref = h200().reference_clock_mhz();
  ASSERT_GT(ref, 0);
  j["tables"]["gemm_shapes"] =
      Json::array({{{"dtype", "bf16"},
                    {"m", 16384},
                    {"n", 50257},
                    {"k", 768},
                    {"seconds", 2.5e-3},
                    {"repeats", {2.4e-3, 2.5e-3, 2.6e-3}},
                    {"clock_mhz", {{ref, ref}, {ref, ref}, {ref, ref}}}},
                   {{"dtype", "fp8"}, {"m", 777}, {"n", 4096}, {"k", 4096}, {"seconds", 1e-5}}});
  CalibratedCostModel cm(parse_profile(j, "synthetic"), find_gpu("h200-sxm-141gb"));
  CostEstimate e = cm.gemm(gemm(16384, 50257, 768));
  EXPECT_NEAR(e.seconds, 2.5e-3, 1e-12);
  EXPECT_EQ(e.source, CostSource::Measured);
  EXPECT_NE(e.detail.find("exact shape"), std::string::npos) << e.detail;
  GemmShape two = gemm(16384, 50257, 768);
  two.batch = 2;
  EXPECT_NEAR(cm.gemm(two).seconds, 5e-3, 1e-12);
  EXPECT_NEAR(cm.gemm(gemm(777, 4096, 4096, Dtype::FP8)).seconds, 1e-5, 1e-15);  // no passes: seconds
  // Another shape or format: the tables, unchanged.
  EXPECT_EQ(cm.gemm(gemm(16384, 50257, 769)).seconds, h200().gemm(gemm(16384, 50257, 769)).seconds);
  EXPECT_EQ(cm.gemm(gemm(16384, 50257, 768, Dtype::FP16)).seconds,
            h200().gemm(gemm(16384, 50257, 768, Dtype::FP16)).seconds);
  // A pass at a higher clock than the reference is referred (slower at the reference).
  j["tables"]["gemm_shapes"][0]["clock_mhz"] = {{2 * ref, 2 * ref}, {2 * ref, 2 * ref}, {2 * ref, 2 * ref}};
  CalibratedCostModel hot(parse_profile(j, "synthetic"), find_gpu("h200-sxm-141gb"));
  EXPECT_NEAR(hot.gemm(gemm(16384, 50257, 768)).seconds, 2.5e-3 * hot.clock_factor(Dtype::BF16, 2 * ref),
              1e-12);
  EXPECT_GT(hot.clock_factor(Dtype::BF16, 2 * ref), 1.0);
}

// A workload's (n, k) row (tables.gemm_rows) answers every m inside it by interpolating the row
// in m; exact shapes still win; other n, k and m outside the row use the tables.
TEST(CalibratedCostModel, GemmRowsAnswerTheirNAndK) {
  Json j = parse_json_text(default_profile_json("h200-sxm-141gb"), "h200");
  const double ref = h200().reference_clock_mhz();
  Json pts = Json::array();
  for (double m : {256.0, 512.0, 1024.0})
    pts.push_back({{"m", m}, {"seconds", m * 1e-7}, {"repeats", {m * 1e-7}}, {"clock_mhz", {{ref, ref}}}});
  j["tables"]["gemm_rows"] = Json::array({{{"dtype", "bf16"}, {"n", 28672}, {"k", 4096}, {"points", pts}}});
  j["tables"]["gemm_shapes"] =
      Json::array({{{"dtype", "bf16"}, {"m", 300}, {"n", 28672}, {"k", 4096}, {"seconds", 1e-3}}});
  CalibratedCostModel cm(parse_profile(j, "synthetic"), find_gpu("h200-sxm-141gb"));
  CostEstimate on = cm.gemm(gemm(512, 28672, 4096)), mid = cm.gemm(gemm(700, 28672, 4096));
  EXPECT_NEAR(on.seconds, 512e-7, 1e-12);
  EXPECT_NE(on.detail.find("row n=28672 k=4096"), std::string::npos) << on.detail;
  EXPECT_GT(mid.seconds, 512e-7);
  EXPECT_LT(mid.seconds, 1024e-7);
  EXPECT_NEAR(cm.gemm(gemm(300, 28672, 4096)).seconds, 1e-3, 1e-12);     // the exact shape
  EXPECT_NE(cm.gemm_from_tables(gemm(300, 28672, 4096)).seconds, 1e-3);  // rows, not the shape
  EXPECT_EQ(cm.gemm(gemm(4096, 28672, 4096)).seconds,
            h200().gemm_from_grid(gemm(4096, 28672, 4096)).seconds);  // outside
  EXPECT_EQ(cm.gemm(gemm(512, 28672, 4096, Dtype::FP16)).seconds,
            h200().gemm(gemm(512, 28672, 4096, Dtype::FP16)).seconds);  // another format
  // Malformed rows name the field.
  for (auto [mutate, field] : std::vector<std::pair<std::function<void(Json&)>, std::string>>{
           {[](Json& r) { r["points"][1]["m"] = 100; }, "tables.gemm_rows[0].points[1].m"},
           {[](Json& r) { r["k"] = -1; }, "tables.gemm_rows[0].k"},
           {[](Json& r) { r.erase("points"); }, "points"},
           {[](Json& r) { r["points"][0]["seconds"] = 0; }, "tables.gemm_rows[0].points[0].seconds"}}) {
    Json bad = j;
    mutate(bad["tables"]["gemm_rows"][0]);
    try {
      parse_profile(bad, "x.json");
      ADD_FAILURE() << "accepted a bad row (" << field << ")";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

// Single-operand alignment classes on a synthetic profile: only n misaligned costs the n ratio,
// only k the k ratio; both misaligned where the both-misaligned class has no algorithm (int8 on
// the H200 has none for odd n and k at m ≥ 32) the worse of the two single-operand ratios; a
// profile without single-operand ratios uses the both-misaligned class's nearest measurement.
TEST(CalibratedCostModel, MisalignedOperandClasses) {
  Json j = parse_json_text(default_profile_json("h200-sxm-141gb"), "h200");
  Json& mis = j["tables"]["gemm"]["bf16"]["misaligned"];
  const std::size_t ne = mis["elements"].size(), nm = mis["m"].size(), nn = mis["nk"].size();
  auto filled = [&](double v) {
    Json r = Json::array();
    for (std::size_t e = 0; e < ne; ++e) {
      Json plane = Json::array();
      for (std::size_t a = 0; a < nm; ++a) plane.push_back(Json(std::vector<double>(nn, v)));
      r.push_back(plane);
    }
    return r;
  };
  mis["ratio_n"] = filled(2.0);
  mis["ratio_k"] = filled(3.0);
  for (std::size_t a = 0; a < nm; ++a)
    for (std::size_t b = 0; b < nn; ++b) mis["ratio"][0][a][b] = nullptr;  // odd n and k: no algorithm
  CalibratedCostModel cm(parse_profile(j, "synthetic"), find_gpu("h200-sxm-141gb"));
  const double base = cm.gemm(gemm(1024, 4096, 4096)).seconds;
  CostEstimate n_odd = cm.gemm(gemm(1024, 4097, 4096)), k_odd = cm.gemm(gemm(1024, 4096, 4097)),
               both = cm.gemm(gemm(1024, 4097, 4097)), both2 = cm.gemm(gemm(1024, 4098, 4098));
  // (n = 4097 itself interpolates a few per cent above n = 4096.)
  EXPECT_NEAR(n_odd.seconds / base, 2.0, 0.1) << n_odd.detail;
  EXPECT_NE(n_odd.detail.find("n multiple of 1 element only"), std::string::npos) << n_odd.detail;
  EXPECT_NEAR(k_odd.seconds / base, 3.0, 0.15) << k_odd.detail;
  EXPECT_NEAR(both.seconds / base, 3.0, 0.15) << both.detail;
  EXPECT_NE(both.detail.find("k-misaligned ratio"), std::string::npos) << both.detail;
  // The 2-element class of the both-misaligned table is measured: it is used as is.
  const double r2 = both2.seconds / cm.gemm(gemm(1024, 4096, 4096)).seconds;
  EXPECT_GT(r2, 1.2) << both2.detail;
  EXPECT_NE(both2.detail.find("n, k multiples of 2 elements only"), std::string::npos) << both2.detail;

  // Without single-operand ratios: the both-misaligned table's nearest measured class (2 elements).
  Json j2 = parse_json_text(default_profile_json("h200-sxm-141gb"), "h200");
  Json& mis2 = j2["tables"]["gemm"]["bf16"]["misaligned"];
  mis2.erase("ratio_n");
  mis2.erase("ratio_k");
  for (std::size_t a = 0; a < nm; ++a)
    for (std::size_t b = 0; b < nn; ++b) mis2["ratio"][0][a][b] = nullptr;
  CalibratedCostModel cm2(parse_profile(j2, "synthetic"), find_gpu("h200-sxm-141gb"));
  CostEstimate f = cm2.gemm(gemm(1024, 4097, 4096));
  EXPECT_NE(f.detail.find("ratio of the 2-element class"), std::string::npos) << f.detail;
  EXPECT_GT(f.seconds, 1.2 * cm2.gemm(gemm(1024, 4096, 4096)).seconds);
}

TEST(CalibratedCostModel, GemmExtrapolatesOutsideTheTable) {
  CostEstimate in = h200().gemm(gemm(32768, 8192, 8192));
  CostEstimate out = h200().gemm(gemm(65536, 8192, 8192));
  EXPECT_EQ(in.source, CostSource::Measured);
  EXPECT_EQ(out.source, CostSource::Extrapolated);
  EXPECT_NEAR(out.seconds / in.seconds, 2.0, 0.1);  // compute-bound: twice the FLOPs
  CostEstimate thin = h200().gemm(gemm(4096, 64, 4096));
  EXPECT_EQ(thin.source, CostSource::Extrapolated);
  EXPECT_GE(thin.seconds, h200().launch_overhead_seconds());
  EXPECT_LT(thin.achieved, thin.ceiling);
  GemmShape b = gemm(1024, 1024, 1024);
  b.batch = 8;
  EXPECT_NEAR(h200().gemm(b).seconds, 8 * h200().gemm(gemm(1024, 1024, 1024)).seconds, 1e-12);
}

TEST(CalibratedCostModel, FormatsWithoutTableUseBf16Efficiency) {
  CostEstimate f32 = h200().gemm(gemm(8192, 8192, 8192, Dtype::FP32));
  CostEstimate tf32 = h200().gemm(gemm(8192, 8192, 8192, Dtype::TF32));
  EXPECT_EQ(f32.source, CostSource::Extrapolated);
  EXPECT_GT(f32.seconds, 3 * tf32.seconds);
  EXPECT_NE(f32.detail.find("bf16"), std::string::npos);
}

TEST(CalibratedCostModel, UnsupportedFormatIsAnError) {
  auto a100 = make_calibrated_cost_model("a100-sxm4-80gb");
  EXPECT_THROW(a100->gemm(gemm(1024, 1024, 1024, Dtype::FP8)), Error);
  EXPECT_GT(a100->gemm(gemm(8192, 8192, 8192)).seconds, 2.5 * h200().gemm(gemm(8192, 8192, 8192)).seconds);
}

TEST(CalibratedCostModel, MemoryBound) {
  const MemoryTable& t = h200().profile().memory;
  for (std::size_t i = 0; i < t.bytes.size(); ++i) {
    CostEstimate e = h200().memory_bound(t.bytes[i]);
    EXPECT_NEAR(e.seconds, t.seconds[i], t.seconds[i] * 1e-9);
    EXPECT_EQ(e.source, CostSource::Measured);
  }
  // Monotone in the bandwidth regime; below ~30 MB a copy costs about its launch (host launch
  // rate), within timing noise: between the floor and the 30 MB time.
  double prev = 0, floor = t.seconds.front(), at30 = h200().memory_bound(3e7).seconds;
  for (double b = 1e4; b < 1e10; b *= 1.7) {
    double s = h200().memory_bound(b).seconds;
    if (b >= 3e7) {
      EXPECT_GE(s, prev * 0.99) << b;
    } else {
      EXPECT_GE(s, 0.85 * floor) << b;
      EXPECT_LE(s, at30) << b;
    }
    prev = s;
  }
  CostEstimate big = h200().memory_bound(4 * t.bytes.back());
  EXPECT_EQ(big.source, CostSource::Extrapolated);
  EXPECT_NEAR(big.seconds, 4 * t.seconds.back(), 1e-12);
  EXPECT_LE(big.achieved, big.ceiling * 1.001);
  EXPECT_THROW(h200().memory_bound(-1), Error);
}

TEST(CalibratedCostModel, AttentionPrefill) {
  const Profile& p = h200().profile();
  const PrefillTable* t = p.prefill_table(128);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->head_dim, 128);
  AttentionPrefillShape s;
  s.heads = t->heads;
  s.kv_heads = t->kv_heads;
  s.head_dim = 128;
  for (std::size_t i = 0; i < t->seq_len.size(); ++i) {
    s.batch = std::int64_t(t->batch[0]);
    s.q_len = s.kv_len = std::int64_t(t->seq_len[i]);
    CostEstimate e = h200().attention_prefill(s);
    EXPECT_NEAR(e.seconds, t->at(i, 0), t->at(i, 0) * 1e-9) << s.q_len;
    EXPECT_EQ(e.source, CostSource::Measured);
  }
  double prev = 0;
  s.batch = 1;
  for (std::int64_t S = 200; S < 30000; S = S * 3 / 2) {
    s.q_len = s.kv_len = S;
    double x = h200().attention_prefill(s).seconds;
    EXPECT_GT(x, prev);
    prev = x;
  }
  s.q_len = s.kv_len = 131072;
  EXPECT_EQ(h200().attention_prefill(s).source, CostSource::Extrapolated);
  s.head_dim = 96;
  EXPECT_EQ(h200().attention_prefill(s).source, CostSource::Extrapolated);
}

// The FlashAttention-2 kernels' tables (bench/pytorch/attention_backends.py, SDPA's flash backend)
// against their own held-out shapes (off the grid, never read by the model): forward from the
// tables, backward as forward × the tables' backward / forward ratio, as a training step prices it.
// Lengths under 2,048 tokens that are not a multiple of 128 run FlashAttention-2's uneven-length
// kernels, 24-52% slower than the tables give them at head width 64 and 128 (not modelled:
// docs/calibration.md, "Attention kernels"); they are checked to stay on that side. The default
// (cuDNN) tables price the same shapes much faster: the two kernels differ.
TEST(CalibratedCostModel, Flash2TablesPriceTheirHeldOutShapes) {
  const Profile& p = h200().profile();
  ASSERT_TRUE(p.has_prefill_kernel(AttentionKernel::Flash2));
  ASSERT_GE(p.holdout_prefill_flash2.size(), 20u);
  std::vector<double> fwd, bwd, default_ratio;
  int uneven = 0;
  for (const auto& h : p.holdout_prefill_flash2) {
    AttentionPrefillShape s;
    s.batch = h.batch, s.q_len = s.kv_len = h.seq_len, s.heads = h.heads, s.kv_heads = h.kv_heads;
    s.head_dim = h.head_dim, s.causal = h.causal, s.kernel = AttentionKernel::Flash2;
    const double f = h200().attention_prefill(s).seconds;
    AttentionPrefillShape d = s;
    d.kernel = AttentionKernel::Default;
    default_ratio.push_back(h200().attention_prefill(d).seconds / f);
    if (h.seq_len % 128 != 0 && h.seq_len < 2048) {
      ++uneven;
      if (h.head_dim != 96) {
        EXPECT_GT(h.seconds / f, 1.0) << h.head_dim << " " << h.batch << " " << h.seq_len;
      }
      std::printf("flash2 held-out, uneven: d%d b%lld S%lld measured / predicted %.2f\n", h.head_dim,
                  (long long)h.batch, (long long)h.seq_len, h.seconds / f);
      continue;
    }
    const auto ratio = attention_backward_ratio(p, s);
    ASSERT_TRUE(ratio.has_value());
    fwd.push_back(std::abs(f / h.seconds - 1));
    bwd.push_back(std::abs(f * *ratio / h.backward_seconds - 1));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double fmax = *std::max_element(fwd.begin(), fwd.end()),
               bmax = *std::max_element(bwd.begin(), bwd.end());
  std::printf(
      "flash2 held-out, multiples of 128 or >= 2048 tokens: %zu shapes, forward median %.1f%% max %.1f%%, "
      "backward median %.1f%% max %.1f%%; %d uneven shapes; default / flash2 forward median %.2f\n",
      fwd.size(), 100 * median(fwd), 100 * fmax, 100 * median(bwd), 100 * bmax, uneven,
      median(default_ratio));
  EXPECT_GE(fwd.size(), 10u);
  EXPECT_LT(median(fwd), 0.05);
  EXPECT_LT(median(bwd), 0.05);
  EXPECT_LT(fmax, 0.10);
  EXPECT_LT(bmax, 0.10);
  EXPECT_LT(median(default_ratio), 0.75);
}

// Derived profiles carry the FlashAttention-2 tables to a GPU of the same architecture only: the
// H100 (Hopper, like the H200) has them, the A100 and B200 price flash2 with their default tables
// (and the cost's detail says so).
TEST(CalibratedCostModel, Flash2TablesFollowTheArchitecture) {
  EXPECT_TRUE(
      make_calibrated_cost_model("h100-sxm5-80gb")->profile().has_prefill_kernel(AttentionKernel::Flash2));
  for (const char* gpu : {"a100-sxm4-80gb", "b200-sxm-180gb"}) {
    const auto cm = make_calibrated_cost_model(gpu);
    EXPECT_FALSE(cm->profile().has_prefill_kernel(AttentionKernel::Flash2)) << gpu;
    AttentionPrefillShape s;
    s.q_len = s.kv_len = 8192, s.heads = 32, s.kv_heads = 8, s.head_dim = 128;
    const double def = cm->attention_prefill(s).seconds;
    s.kernel = AttentionKernel::Flash2;
    const CostEstimate e = cm->attention_prefill(s);
    EXPECT_EQ(e.seconds, def) << gpu;
    EXPECT_NE(e.detail.find("flash2 not measured"), std::string::npos) << e.detail;
  }
}

TEST(CalibratedCostModel, CausalAttentionAtAnyLengthIsAClosedForm) {
  // The causal tile count is a floor sum: the longest sequence accepted (2^24 tokens) and a
  // cached prefix answer at once, finite and growing with the work.
  AttentionPrefillShape s;
  s.heads = 32, s.kv_heads = 8, s.head_dim = 128, s.batch = 1;
  double prev = 0;
  for (std::int64_t S : {std::int64_t(1) << 20, std::int64_t(1) << 22, std::int64_t(1) << 24}) {
    s.q_len = s.kv_len = S;
    const double x = h200().attention_prefill(s).seconds;
    EXPECT_TRUE(std::isfinite(x));
    EXPECT_GT(x, 3.5 * prev);  // quadratic in the length
    prev = x;
  }
  s.q_len = 4096, s.kv_len = 4096 + 100000;  // new tokens after a long cached prefix
  const double with_prefix = h200().attention_prefill(s).seconds;
  s.kv_len = 4096;
  EXPECT_GT(with_prefix, h200().attention_prefill(s).seconds);
}

TEST(CalibratedCostModel, AttentionDecode) {
  const DecodeTable& t = *h200().profile().decode;
  AttentionDecodeShape s;
  s.heads = t.heads;
  s.kv_heads = t.kv_heads;
  s.head_dim = t.head_dim;
  for (std::size_t i = 0; i < t.batch.size(); ++i)
    for (std::size_t j = 0; j < t.context.size(); ++j) {
      s.batch = std::int64_t(t.batch[i]);
      s.total_context_tokens = s.batch * std::int64_t(t.context[j]);
      CostEstimate e = h200().attention_decode(s);
      EXPECT_NEAR(e.seconds, t.at(i, j), t.at(i, j) * 1e-9);
      EXPECT_EQ(e.source, CostSource::Measured);
    }
  s.batch = 64;
  s.total_context_tokens = 64 * 4096;
  double gqa8 = h200().attention_decode(s).seconds;
  s.kv_heads = 2;  // a quarter of the KV bytes
  EXPECT_LT(h200().attention_decode(s).seconds, gqa8 * 0.6);
  s.kv_heads = t.kv_heads;
  s.batch = 1024;
  s.total_context_tokens = 1024 * 4096;
  CostEstimate big = h200().attention_decode(s);
  EXPECT_EQ(big.source, CostSource::Extrapolated);
  EXPECT_GT(big.seconds, gqa8 * 10);
}

TEST(CalibratedCostModel, LaunchOverheadIsMeasured) {
  EXPECT_DOUBLE_EQ(h200().launch_overhead_seconds(), h200().profile().ceilings.launch_us * 1e-6);
  EXPECT_GT(h200().launch_overhead_seconds(), 1e-7);
  EXPECT_LT(h200().launch_overhead_seconds(), 1e-4);
}

TEST(CalibratedCostModel, ProfileForAnotherGpuIsRefusedUnlessForced) {
  std::string path = std::string(INFRAPLAN_SOURCE_DIR) + "/hardware/profiles/h200-sxm-141gb.json";
  EXPECT_THROW(make_calibrated_cost_model("h100-sxm5-80gb", path), Error);
  auto forced = make_calibrated_cost_model("h100-sxm5-80gb", path, true);
  EXPECT_EQ(forced->gpu().name, "h100-sxm5-80gb");
  EXPECT_THROW(make_calibrated_cost_model("h200-sxm-141gb", "/nonexistent.json"), Error);
}

// Off the grid's multiples of 64 (rows still 16-byte aligned) the fitted factor applies; it is
// fitted on the fit points only. Mostly a slow-down (grid sizes are the kernels' best cases), but
// the fit may land slightly below 1 (fp16: 0.98 in the 2026-11-29 profile): bounded, not forced.
TEST(CalibratedCostModel, OffGridFactorIsFittedAndApplied) {
  for (Dtype d : {Dtype::BF16, Dtype::FP16, Dtype::TF32, Dtype::FP8, Dtype::INT8}) {
    double f = h200().offgrid_factor(d);
    EXPECT_GE(f, 0.9) << dtype_name(d);
    EXPECT_LE(f, 1.5) << dtype_name(d);
  }
  EXPECT_EQ(h200().offgrid_factor(Dtype::FP32), 1.0);  // no table
  CostEstimate on = h200().gemm(gemm(4096, 4096, 4096));
  CostEstimate off = h200().gemm(gemm(4096, 4096, 4104));  // k multiple of 8, not of 64
  EXPECT_NE(off.detail.find("off-grid"), std::string::npos) << off.detail;
  EXPECT_EQ(on.detail.find("off-grid"), std::string::npos) << on.detail;
  EXPECT_NEAR(off.seconds / on.seconds, h200().offgrid_factor(Dtype::BF16), 0.05);
}

// Clock referral on a synthetic profile: every cell and fit point of a smooth table is "measured"
// at a different clock with t ∝ 1 / clock (a clock-bound kernel). The model must find the
// reference clock (the median), fit the exponent 1 from the fit points, and predict the smooth
// table at the reference clock, off the grid too; clock_factor refers a measurement back.
TEST(CalibratedCostModel, ClockReferralRecoversAClockBoundTable) {
  Json j = parse_json_text(default_profile_json("h200-sxm-141gb"), "h200");
  j.erase("fleet");  // a synthetic table: no other machines, no measured rows
  j["tables"].erase("gemm_rows");
  const double ref = 1600;
  auto truth = [](double m, double n, double k) { return 5e-6 + 2.0 * m * n * k / 6e14; };
  std::uint64_t state = 12345;
  auto clock = [&]() {  // 1200 … 2000 MHz, deterministic
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return 1200.0 + double((state >> 33) % 801);
  };
  Json& g = j["tables"]["gemm"];
  for (auto it = g.begin(); it != g.end(); ++it) {
    Json& t = it.value();
    const auto& M = t["m"];
    const auto& N = t["n"];
    const auto& K = t["k"];
    for (std::size_t a = 0; a < M.size(); ++a)
      for (std::size_t b = 0; b < N.size(); ++b)
        for (std::size_t c = 0; c < K.size(); ++c) {
          double mhz = (a + b + c) % 2 ? clock() : ref;  // half at the reference: it is the median
          t["seconds"][a][b][c] =
              truth(M[a].get<double>(), N[b].get<double>(), K[c].get<double>()) * ref / mhz;
          t["clock_mhz_before"][a][b][c] = mhz;
          t["clock_mhz_after"][a][b][c] = mhz;
        }
    for (auto& f : t["fit_points"]) {
      double m = f["m"].get<double>(), n = std::ceil(f["n"].get<double>() / 64) * 64,
             k = std::ceil(f["k"].get<double>() / 64) * 64, mhz = clock();
      f["n"] = n;
      f["k"] = k;
      f["seconds"] = truth(m, n, k) * ref / mhz;
      f["clock_mhz"] = {mhz, mhz};
    }
  }
  CalibratedCostModel cm(parse_profile(j, "synthetic"), find_gpu("h200-sxm-141gb"));
  EXPECT_NEAR(cm.reference_clock_mhz(), ref, 1e-9);
  for (Dtype d : {Dtype::BF16, Dtype::FP8, Dtype::INT8}) {
    EXPECT_EQ(cm.clock_exponent(d), 1.0) << dtype_name(d);
    EXPECT_NEAR(cm.clock_factor(d, 2 * ref), 2.0, 1e-12);
    for (auto [m, n, k] : {std::array<double, 3>{777, 5120, 3072}, {8192, 8192, 8192}, {33, 1536, 12288}}) {
      double want = truth(m, n, k);
      double got = cm.gemm(gemm(std::int64_t(m), std::int64_t(n), std::int64_t(k), d)).seconds;
      EXPECT_NEAR(got / want, 1.0, 0.12) << dtype_name(d) << " " << m << "x" << n << "x" << k;
    }
  }
  EXPECT_EQ(cm.clock_factor(Dtype::BF16, 0), 1.0);  // unknown clock
}

// The workload rows' measured clock exponent (tables.gemm.<fmt>.rows_clock_exponent: the same rows
// timed on several machine starts) refers each graph-timed row point by its clock reading; rows of
// the older harness, the table's own exponent (fitted on its fit points) and the grid are left as
// they were.
TEST(CalibratedCostModel, RowsClockExponentRefersTheRows) {
  Json j = parse_json_text(default_profile_json("h200-sxm-141gb"), "h200");
  j["tables"]["gemm"]["bf16"].erase("rows_clock_exponent");
  Json* row = nullptr;
  for (Json& r : j["tables"]["gemm_rows"])
    if (r["dtype"] == "bf16" && r.value("layout", "tn") == "nn") row = &r;
  ASSERT_NE(row, nullptr);
  Json& pt = (*row)["points"][1];
  // One start's time with its reading (the profile's points carry one per start).
  const double secs = pt["repeats"][0].get<double>(),
               mhz = 0.5 * (pt["clock_mhz"][0][0].get<double>() + pt["clock_mhz"][0][1].get<double>());
  pt["seconds"] = secs;
  pt["repeats"] = Json::array({secs});
  pt["clock_mhz"] = Json::array({pt["clock_mhz"][0]});
  const CalibratedCostModel plain(parse_profile(j, "plain"), find_gpu("h200-sxm-141gb"));
  GemmShape s =
      gemm(pt["m"].get<std::int64_t>(), (*row)["n"].get<std::int64_t>(), (*row)["k"].get<std::int64_t>());
  s.layout = GemmLayout::NN;
  for (double beta : {0.35, 0.9}) {
    j["tables"]["gemm"]["bf16"]["rows_clock_exponent"] = {
        {"value", beta}, {"pairs", 2000}, {"method", "test"}};
    CalibratedCostModel cm(parse_profile(j, "rows"), find_gpu("h200-sxm-141gb"));
    EXPECT_EQ(cm.clock_exponent(Dtype::BF16), plain.clock_exponent(Dtype::BF16));
    EXPECT_NEAR(cm.gemm(s).seconds, secs * std::pow(mhz / cm.reference_clock_mhz(), beta), 1e-6 * secs);
    const GemmShape off_rows = gemm(1000, 6016, 1984);  // no row: the grid, as before
    EXPECT_EQ(cm.gemm(off_rows).seconds, plain.gemm(off_rows).seconds);
  }
  Json legacy = j;  // the same row timed with the older harness keeps the table's exponent
  for (Json& r : legacy["tables"]["gemm_rows"]) r["timing"] = "legacy";
  CalibratedCostModel cm(parse_profile(legacy, "legacy rows"), find_gpu("h200-sxm-141gb"));
  EXPECT_NEAR(cm.gemm(s).seconds, plain.gemm(s).seconds, 1e-9 * secs);
}

// A row point timed on several machine starts (bench/calib/merge_layout_runs.py keeps each start's
// time as a repeat with its own clock reading): each is referred to the reference clock, and the
// point is their median — the mean of the middle two for an even count, not the slower one.
TEST(CalibratedCostModel, RowPointOfSeveralStartsIsTheirMedian) {
  Json j = parse_json_text(default_profile_json("h200-sxm-141gb"), "h200");
  Json* row = nullptr;
  for (Json& r : j["tables"]["gemm_rows"])
    if (r["dtype"] == "bf16" && r.value("layout", "tn") == "tn") row = &r;
  ASSERT_NE(row, nullptr);
  Json& pt = (*row)["points"][2];
  ASSERT_GE(pt["repeats"].size(), 3u) << "the embedded rows carry three starts' times";
  const double secs = pt["repeats"][0].get<double>();
  const Json clock = pt["clock_mhz"][0];
  const double beta = j["tables"]["gemm"]["bf16"]["rows_clock_exponent"]["value"].get<double>();
  GemmShape s =
      gemm(pt["m"].get<std::int64_t>(), (*row)["n"].get<std::int64_t>(), (*row)["k"].get<std::int64_t>());
  auto with = [&](Json repeats, Json clocks, const char* what) {
    pt["seconds"] = repeats[0];
    pt["repeats"] = std::move(repeats);
    pt["clock_mhz"] = std::move(clocks);
    return CalibratedCostModel(parse_profile(j, what), find_gpu("h200-sxm-141gb"));
  };
  const CalibratedCostModel one = with(Json::array({secs}), Json::array({clock}), "one start");
  const CalibratedCostModel two =
      with(Json::array({secs, 1.2 * secs}), Json::array({clock, Json::array({1500, 1500})}), "two starts");
  const CalibratedCostModel three =
      with(Json::array({secs, 1.2 * secs, 0.9 * secs}),
           Json::array({clock, Json::array({1500, 1500}), Json::array({1980, 1980})}), "three starts");
  const double ref = two.reference_clock_mhz();
  const double mhz = 0.5 * (clock[0].get<double>() + clock[1].get<double>());
  const double a = secs * std::pow(mhz / ref, beta), b = 1.2 * secs * std::pow(1500 / ref, beta),
               c = 0.9 * secs * std::pow(1980 / ref, beta);
  EXPECT_NEAR(one.gemm(s).seconds, a, 1e-9 * secs);
  EXPECT_NEAR(two.gemm(s).seconds, 0.5 * (a + b), 1e-9 * secs);
  EXPECT_NEAR(three.gemm(s).seconds, std::max(std::min(a, b), std::min(std::max(a, b), c)), 1e-9 * secs);
}

// Time grows with k at fixed m, n (aligned k). At m = 1 launch-bound cells can be out of order,
// which the model reproduces at grid points: there only the ends are compared. int8 is left out
// of the step-by-step check: its measured m = 64, n = 8192 row drops from 55.6 µs at k = 11584 to
// 45.8 µs at k = 16384 (cuBLASLt picks another kernel), and the model follows the measurement.
// (The grid: a workload row, measured through another entry point at the calibration's clock
// state, need not line up with its grid neighbours.)
TEST(CalibratedCostModel, GemmMonotoneInK) {
  for (Dtype d : {Dtype::BF16, Dtype::FP16, Dtype::TF32, Dtype::FP8, Dtype::INT8})
    EXPECT_GT(h200().gemm_from_grid(gemm(1, 8192, 32768, d)).seconds,
              2 * h200().gemm_from_grid(gemm(1, 8192, 1024, d)).seconds)
        << dtype_name(d);
  for (Dtype d : {Dtype::BF16, Dtype::FP16, Dtype::TF32, Dtype::FP8})
    for (std::int64_t m : {64, 1000, 8192}) {
      double prev = 0;
      for (std::int64_t k = 1024; k <= 32768; k += 1024) {
        double t = h200().gemm_from_grid(gemm(m, 8192, k, d)).seconds;
        EXPECT_GE(t, prev * 0.97) << dtype_name(d) << " m=" << m << " k=" << k;
        prev = t;
      }
    }
}

// Decode GEMV (m = 1): memory-bound, never faster than streaming the weights at the measured
// copy bandwidth, and far below the compute roofline.
TEST(CalibratedCostModel, DecodeGemvIsMemoryBound) {
  const double bw = h200().profile().ceilings.copy_GBps * 1e9;
  for (Dtype d : {Dtype::BF16, Dtype::FP8})
    for (std::int64_t nk : {4096, 8192, 16384}) {
      CostEstimate e = h200().gemm(gemm(1, nk, nk, d));
      double weight_bytes = double(nk) * double(nk) * dtype_bytes(d);
      EXPECT_GE(e.seconds, weight_bytes / bw * 0.9) << dtype_name(d) << " " << nk;
      EXPECT_LE(e.seconds, weight_bytes / bw * 4 + 20e-6) << dtype_name(d) << " " << nk;
      EXPECT_LT(e.achieved, 0.05 * e.ceiling);
    }
}

// A weight matrix wider than the table (CodeLlama-34B's gate-up, 44,544 × 8,192) streamed at one
// row: extrapolated from the table's widest point and then corrected for the fleet and the timing
// harness, it would move 730 MB at 4.66 TB/s; it is held at the fastest streaming the table
// measured (4.40 TB/s on the H200, above the 4.22 TB/s device copy, which also writes).
TEST(CalibratedCostModel, CorrectionsNeverStreamFasterThanTheTableMeasured) {
  const double rate = h200().gemm_stream_Bps(Dtype::BF16);
  EXPECT_GT(rate, h200().profile().ceilings.copy_GBps * 1e9);
  EXPECT_LT(rate, 4.8e12) << "below the datasheet's HBM rate";
  for (std::int64_t n : {32768, 44544, 65536}) {
    const GemmShape g = gemm(1, n, 8192, Dtype::BF16);
    EXPECT_GE(h200().gemm(g).seconds, gemm_min_bytes(g) / rate * (1 - 1e-12)) << n;
  }
  // Compute-bound and L2-sized GEMMs keep their corrected prices.
  const GemmShape big = gemm(8192, 8192, 8192, Dtype::BF16);
  EXPECT_EQ(h200().gemm(big).detail.find("held at"), std::string::npos);
  const double peak = h200().profile().ceilings.gemm_TFLOPs.at(Dtype::BF16) * 1e12;
  EXPECT_LT(h200().gemm(big).seconds, 2.0 * big.flops() / peak) << "compute-bound: within 2x of its FLOP roofline";
  EXPECT_EQ(h200().gemm(gemm(1, 4096, 4096, Dtype::BF16)).detail.find("held at"), std::string::npos);
}

// The accuracy report of docs/calibration.md: held-out shapes measured in the same run.
TEST(CalibratedCostModel, HeldOutAccuracy) {
  auto rows = holdout_rows(h200(), h200().profile());
  auto stats = holdout_stats(rows);
  ASSERT_FALSE(stats.empty());
  for (const auto& s : stats) {
    std::printf("holdout %-18s n=%3zu median %5.1f%%  p90 %5.1f%%  max %5.1f%%\n", s.kind.c_str(), s.count,
                100 * s.median, 100 * s.p90, 100 * s.max);
    // Target (docs/calibration.md): median ≤ 5%, p90 ≤ 10%. Met for attention and memory-bound
    // kernels and for the GEMM shapes of real models (gemm_workload: the 96 GEMMs of the GPT-2
    // training configurations, timed in the same run, predicted from the tables: 2.8% / 7.7%);
    // not for the random held-out GEMMs of all five formats
    // (at the reference clock 4.5% / 17.7%, as measured 5.6% / 18.5%; odd sizes 14.9% / 36.0% and
    // 12.7% / 36.1%), whose kernel choice changes between neighbouring shapes: these bounds guard
    // what the model reaches today, with about a point of margin, against regressions.
    if (s.kind == "gemm") {
      EXPECT_LE(s.median, 0.055) << s.kind;
      EXPECT_LE(s.p90, 0.19) << s.kind;
    } else if (s.kind == "gemm_as_measured") {
      EXPECT_LE(s.median, 0.065) << s.kind;
      EXPECT_LE(s.p90, 0.195) << s.kind;
    } else if (s.kind == "gemm_workload") {  // the target
      EXPECT_LE(s.median, 0.05) << s.kind;
      EXPECT_LE(s.p90, 0.10) << s.kind;
    } else if (s.kind == "gemm_odd") {
      EXPECT_LE(s.median, 0.16) << s.kind;
      EXPECT_LE(s.p90, 0.38) << s.kind;
    } else if (s.kind == "gemm_odd_as_measured") {
      EXPECT_LE(s.median, 0.14) << s.kind;
      EXPECT_LE(s.p90, 0.38) << s.kind;
    } else {
      EXPECT_LE(s.median, 0.05) << s.kind;
      EXPECT_LE(s.p90, 0.10) << s.kind;
    }
  }
  std::printf("reference clock %.0f MHz\n", h200().reference_clock_mhz());
  for (const auto& t : h200().profile().gemm)
    std::printf("fitted %-5s tile quanta m %g n %g, off-grid factor %.3f, clock exponent %.2f\n",
                std::string(dtype_name(t.dtype)).c_str(), t.quantum_m, t.quantum_n,
                h200().offgrid_factor(t.dtype), h200().clock_exponent(t.dtype));
  std::printf("fitted attention blocks: query %g, key %g tokens\n", h200().attention_blocks().first,
              h200().attention_blocks().second);
  // GEMM errors per format (the shape starts with the format's name).
  for (const char* kind : {"gemm", "gemm_odd", "gemm_as_measured"})
    for (Dtype d : {Dtype::BF16, Dtype::FP16, Dtype::TF32, Dtype::FP8, Dtype::INT8}) {
      std::vector<HoldoutRow> sub;
      std::string prefix = std::string(dtype_name(d)) + " ";
      for (const auto& r : rows)
        if (r.kind == kind && r.shape.rfind(prefix, 0) == 0) sub.push_back(r);
      for (const auto& s : holdout_stats(sub))
        std::printf("holdout %-8s %-5s n=%3zu median %5.1f%%  p90 %5.1f%%  max %5.1f%%\n", kind,
                    std::string(dtype_name(d)).c_str(), s.count, 100 * s.median, 100 * s.p90, 100 * s.max);
    }
  // Workload shapes with every size a multiple of 8 vs those with a size that is not (GPT-2's
  // vocabulary, 50257).
  auto workload_split = [](const std::vector<HoldoutRow>& all, const char* label) {
    for (bool aligned : {true, false}) {
      std::vector<HoldoutRow> sub;
      for (const auto& r : all)
        if (r.kind == "gemm_workload" && (r.m % 8 == 0 && r.n % 8 == 0 && r.k % 8 == 0) == aligned)
          sub.push_back(r);
      for (const auto& s : holdout_stats(sub))
        std::printf("holdout gemm_workload %-9s %-34s n=%3zu median %5.1f%%  p90 %5.1f%%  max %5.1f%%\n",
                    aligned ? "aligned" : "unaligned", label, s.count, 100 * s.median, 100 * s.p90,
                    100 * s.max);
    }
  };
  workload_split(rows, "(same run)");
  // Workload shapes timed in a separate process after the profile (infraplan-calibrate --shapes
  // --add-to): the GPT-2 configurations with the LM head's backward GEMMs, and the shipped
  // training and serving scenarios' shapes, the latter predicted from the tables alone and with
  // their (n, k) rows timed over the m axis in another process (tables.gemm_rows).
  const std::string data = std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/calib/";
  struct Case {
    const char* label;
    const char* file;
    const char* rows;  ///< nullptr: tables only
    double p90;        ///< guard, about a point above what was reached
  };
  for (const Case& c : {Case{"gpt2 120 shapes", "h200_gemm_workload_add_to.json", nullptr, 0.125},
                        Case{"scenarios, tables", "h200_gemm_workload_scenarios.json", nullptr, 0.175},
                        Case{"scenarios, rows", "h200_gemm_workload_scenarios.json",
                             "h200_gemm_rows_scenarios.json", 0.10}}) {
    Json j = parse_json_text(default_profile_json("h200-sxm-141gb"), "h200");
    j["holdout"]["gemm_workload"] = read_json_file(data + c.file).at("gemm_workload");
    if (c.rows) j["tables"]["gemm_rows"] = read_json_file(data + c.rows).at("gemm_rows");
    CalibratedCostModel later(parse_profile(j, c.file), find_gpu("h200-sxm-141gb"));
    std::vector<HoldoutRow> wl;
    for (auto& r : holdout_rows(later, later.profile()))
      if (r.kind == "gemm_workload") wl.push_back(r);
    for (const auto& s : holdout_stats(wl)) {
      std::printf("holdout gemm_workload %-34s n=%3zu median %5.1f%%  p90 %5.1f%%  max %5.1f%%\n", c.label,
                  s.count, 100 * s.median, 100 * s.p90, 100 * s.max);
      EXPECT_LE(s.median, 0.05) << c.label;
      EXPECT_LE(s.p90, c.p90) << c.label;
    }
    workload_split(wl, c.label);
    if (c.rows) {  // token counts the rows were timed at vs those they interpolate
      const auto& axis = later.profile().gemm_table(Dtype::BF16)->m;
      for (bool on : {true, false}) {
        std::vector<HoldoutRow> sub;
        for (const auto& r : wl)
          if ((std::find(axis.begin(), axis.end(), double(r.m)) != axis.end()) == on) sub.push_back(r);
        for (const auto& s : holdout_stats(sub))
          std::printf(
              "holdout gemm_workload %-44s n=%3zu median %5.1f%%  p90 %5.1f%%  max %5.1f%%\n",
              on ? "scenarios, rows, m on the rows' axis" : "scenarios, rows, m between the rows' points",
              s.count, 100 * s.median, 100 * s.p90, 100 * s.max);
      }
    }
    if (std::getenv("INFRAPLAN_HOLDOUT_ROWS"))
      for (const auto& r : wl)
        std::printf("%-18s %-28s measured %10.2f us predicted %10.2f us err %5.1f%% (%s)\n", r.kind.c_str(),
                    r.shape.c_str(), r.measured_seconds * 1e6, r.predicted_seconds * 1e6, 100 * r.rel_error,
                    c.label);
  }
  if (std::getenv("INFRAPLAN_HOLDOUT_ROWS"))
    for (const auto& r : rows)
      std::printf("%-18s %-28s measured %10.2f us predicted %10.2f us err %5.1f%% %s\n", r.kind.c_str(),
                  r.shape.c_str(), r.measured_seconds * 1e6, r.predicted_seconds * 1e6, 100 * r.rel_error,
                  cost_source_name(r.source));
}

}  // namespace
}  // namespace infraplan::hw

// The serving engine's row kernels (profile serving_kernels, infraplan-bench kernels): measured
// widths answer exactly, widths between them linearly, rows past the table in proportion, and a
// kernel or profile without a table says so.
TEST(CalibratedCostModel, RowKernelsComeFromTheMeasuredTable) {
  const auto gpu = infraplan::hw::find_gpu("h200-sxm-141gb");
  const infraplan::hw::Profile p = infraplan::hw::default_profile("h200-sxm-141gb");
  ASSERT_TRUE(p.serving_kernels.has_value());
  infraplan::hw::CalibratedCostModel cm(p, gpu);
  const auto& rope = p.serving_kernels->kernels.at("rope_kv_write");
  ASSERT_GE(rope.size(), 2u);
  const double w0 = rope[0].first, w1 = rope[1].first;
  const double t0 = rope[0].second[0], t1 = rope[1].second[0];
  EXPECT_NEAR(*cm.row_kernel_seconds("rope_kv_write", 1, w0), t0, 1e-12);
  EXPECT_NEAR(*cm.row_kernel_seconds("rope_kv_write", 1, 0.5 * (w0 + w1)), 0.5 * (t0 + t1), 1e-12);
  const auto& rows = p.serving_kernels->rows;
  const double last = rope[0].second.back();
  EXPECT_NEAR(*cm.row_kernel_seconds("rope_kv_write", 2 * rows.back(), w0), 2 * last, 1e-12);
  // Latency-bound at one row: far above the bytes at HBM speed.
  EXPECT_GT(*cm.row_kernel_seconds("add_rmsnorm", 1, 4096), 4 * 4096 * 2 / (gpu.hbm_GBps * 1e9) * 10);
  EXPECT_FALSE(cm.row_kernel_seconds("layernorm", 1, 4096).has_value());
  infraplan::hw::Profile bare = p;
  bare.serving_kernels.reset();
  EXPECT_FALSE(infraplan::hw::CalibratedCostModel(bare, gpu).row_kernel_seconds("add_rmsnorm", 1, 4096));
}

// The clock a GEMM held on its own runs at (profile "power"): the top clock for a GEMM that draws
// less than the limit, below it for a heavy one, lower still for fp8 (the power probe held an fp8
// 8192³ at 1,319-1,335 MHz, bf16 at ~1,470); 0 without a power law.
TEST(CalibratedCostModel, HeldClockOfAGemmFollowsItsDraw) {
  using namespace infraplan;
  const auto cm = hw::make_calibrated_cost_model("h200-sxm-141gb");
  ASSERT_NE(cm->power_model(), nullptr);
  const double top = cm->power_model()->max_clock_mhz();
  hw::GemmShape tiny;
  tiny.m = tiny.n = tiny.k = 64;
  EXPECT_DOUBLE_EQ(cm->gemm_held_clock_mhz(tiny), top);
  hw::GemmShape big;
  big.m = big.n = big.k = 8192;
  const double bf16 = cm->gemm_held_clock_mhz(big);
  EXPECT_GT(bf16, 1300);
  EXPECT_LT(bf16, 0.85 * top);
  big.dtype = Dtype::FP8;
  EXPECT_LT(cm->gemm_held_clock_mhz(big), bf16);
  // Held, the heavy GEMM is slower than at the reference clock; the tiny one faster (top clock).
  big.dtype = Dtype::BF16;
  EXPECT_GT(cm->gemm(big).seconds / cm->clock_factor(Dtype::BF16, bf16), cm->gemm(big).seconds);
  EXPECT_LT(cm->gemm(tiny).seconds / cm->clock_factor(Dtype::BF16, top), cm->gemm(tiny).seconds);
  EXPECT_EQ(hw::make_calibrated_cost_model("a100-sxm4-80gb")->gemm_held_clock_mhz(big), 0.0);
}

// A held GEMM's time follows its clock with the exponent the power probe's held fit GEMMs measured
// between their burst and held times (H200: 8192³ 0.63, 4096³ 0.67, 2048³ 0.55, 512×8192×8192 0.58;
// fp8 8192³ 0.52), not the grid's fitted ½; a profile without a power section keeps the grid's.
TEST(CalibratedCostModel, HeldExponentIsWhatThePowerProbesHeldGemmsMeasured) {
  using namespace infraplan;
  const auto cm = hw::make_calibrated_cost_model("h200-sxm-141gb");
  const double b16 = cm->held_clock_exponent(Dtype::BF16), b8 = cm->held_clock_exponent(Dtype::FP8);
  EXPECT_NEAR(b16, (0.58 + 0.63) / 2, 0.01);
  EXPECT_NEAR(b8, 0.52, 0.01);
  EXPECT_NE(b16, cm->clock_exponent(Dtype::BF16));
  const double ref = cm->reference_clock_mhz();
  EXPECT_NEAR(cm->held_clock_factor(Dtype::BF16, 1500), std::pow(1500 / ref, b16), 1e-12);
  EXPECT_DOUBLE_EQ(cm->held_clock_factor(Dtype::BF16, ref), 1.0);
  // The grid's exponent where the profile has no power section.
  const auto a100 = hw::make_calibrated_cost_model("a100-sxm4-80gb");
  EXPECT_DOUBLE_EQ(a100->held_clock_exponent(Dtype::BF16), a100->clock_exponent(Dtype::BF16));
}

// A GEMM that runs part of the time draws the time average: the less it runs, the higher the clock
// the limiter leaves it, up to the top clock; a duty outside (0, 1] is refused.
TEST(CalibratedCostModel, HeldClockRisesAsTheGemmRunsLessOfTheTime) {
  using namespace infraplan;
  const auto cm = hw::make_calibrated_cost_model("h200-sxm-141gb");
  const double top = cm->power_model()->max_clock_mhz();
  hw::GemmShape big;
  big.m = big.n = big.k = 8192;
  EXPECT_DOUBLE_EQ(cm->gemm_held_clock_mhz(big, 1.0), cm->gemm_held_clock_mhz(big));
  double last = 0;
  for (double duty : {1.0, 0.9, 0.75, 0.6}) {
    const double mhz = cm->gemm_held_clock_mhz(big, duty);
    EXPECT_GT(mhz, last) << duty;
    EXPECT_LE(mhz, top) << duty;
    last = mhz;
  }
  EXPECT_DOUBLE_EQ(cm->gemm_held_clock_mhz(big, 0.05), top);
  for (double bad : {0.0, -0.5, 1.5, std::nan("")})
    EXPECT_THROW(cm->gemm_held_clock_mhz(big, bad), Error) << bad;
}

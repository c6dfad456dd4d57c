#include "hardware/power_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "common/error.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/clocked_cost_model.hpp"
#include "hardware/framework_costs.hpp"
#include "hardware/gpu_spec.hpp"

namespace infraplan::hw {
namespace {

const CalibratedCostModel& h200() {
  static const auto cm = make_calibrated_cost_model("h200-sxm-141gb");
  return *cm;
}

// The law fitted on the embedded H200 profile's sustained-load points: every point (fit and held
// out) printed against it, as docs/calibration.md quotes them.
TEST(PowerModel, FitsTheH200SustainedLoadPoints) {
  const PowerModel* pm = h200().power_model();
  ASSERT_NE(pm, nullptr);
  const auto& p = pm->fitted_params();
  std::printf("law: P = %.0f W + (%.3f W per TFLOP/s 16-bit + %.3f per TFLOP/s 8-bit + %.1f W per TB/s copied + "
              "%.1f W per TB/s elementwise) x (f / %.0f MHz)^%.2f, limit %.0f W\n",
              p.base_w, p.w_per_tflops16, p.w_per_tflops8, p.w_per_TBps, p.w_per_ew_TBps, pm->max_clock_mhz(),
              p.exponent, pm->limit_w());
  std::printf(
      "with normal operands (normal_operands.clock_ratio): %.3f W per TFLOP/s 16-bit, %.3f per TFLOP/s 8-bit "
      "(x %.4f)\n",
      pm->params().w_per_tflops16, pm->params().w_per_tflops8, pm->normal_operand_factor());
  std::printf("attention: %.3f W per TFLOP/s 16-bit (%s)\n", p.w_per_attn_tflops16,
              pm->knows_attention() ? "fitted on the attention fit points, the rest held"
                                    : "no attention points: e16");
  std::printf("| role | workload | measured clock | modelled | error | power |\n|---|---|---|---|---|---|\n");
  for (const auto& c : pm->checks())
    std::printf("| %s%s | %s | %.0f MHz | %.0f MHz | %+.1f%% | %.0f W |\n", c.role.c_str(),
                c.averaged ? "" : " (phases too long for the law)", c.label.c_str(),
                c.measured_mhz, c.modelled_mhz, 100 * (c.modelled_mhz / c.measured_mhz - 1), c.power_w);
  std::printf("max |clock error|: fit %.1f%%, held out %.1f%%\n", 100 * pm->max_clock_error("fit"),
              100 * pm->max_clock_error("holdout"));
  for (double v : {p.base_w, p.w_per_tflops16, p.w_per_tflops8, p.w_per_TBps, p.w_per_ew_TBps, p.exponent,
                   p.w_per_attn_tflops16}) {
    EXPECT_TRUE(std::isfinite(v));
    EXPECT_GE(v, 0);
  }
  EXPECT_LT(p.base_w, pm->limit_w());
  // Run of 2026-12-02 (docs/calibration.md, "Sustained clock under the power limit"): the training
  // GEMMs, attention and the short-phase mixtures within 8%; a serving decode step's GEMMs (256
  // rows) settle lower than the law says, by up to 20% (the law does not describe them: kept as a
  // bound so that a change shows).
  // PyTorch SDPA held out (2026-12-03, bench/pytorch/attention_power.py): -6% (forward at 8k) …
  // +13% (forward + backward at 1k, whose dQ accumulation and softmax statistics draw beyond what its
  // FLOPs and its q/k/v/o bytes count): bounded apart, at 15%.
  double training = 0, decode_step = 0, sdpa = 0;
  for (const auto& c : pm->checks()) {
    if (c.role != "holdout" || !c.averaged) continue;
    const bool serving = c.label.rfind("gemm bf16 256x", 0) == 0 || c.label == "decode";
    const bool torch_attention = c.label.find("(torch-sdpa)") != std::string::npos;
    double& worst = serving ? decode_step : torch_attention ? sdpa : training;
    worst = std::max(worst, std::fabs(c.modelled_mhz / c.measured_mhz - 1));
  }
  EXPECT_LT(training, 0.08);
  EXPECT_LT(decode_step, 0.25);
  EXPECT_LT(sdpa, 0.15);
}

TEST(PowerModel, ClockFallsWithDemandAndMeetsTheLimit) {
  const PowerModel* pm = h200().power_model();
  ASSERT_NE(pm, nullptr);
  PowerDemand light;
  light.tflops16 = 50;
  EXPECT_DOUBLE_EQ(pm->sustained_clock_mhz(light), pm->max_clock_mhz());
  EXPECT_LE(pm->power_w(light, pm->max_clock_mhz()), pm->limit_w());
  double last = pm->max_clock_mhz() + 1;
  for (double tf : {400.0, 600.0, 800.0, 1000.0}) {
    PowerDemand d;
    d.tflops16 = tf;
    const double f = pm->sustained_clock_mhz(d);
    EXPECT_LE(f, last) << tf;
    if (f < pm->max_clock_mhz()) {
      EXPECT_NEAR(pm->power_w(d, f), pm->limit_w(), 0.5) << tf;
    }
    last = f;
  }
  // Memory traffic draws power too.
  PowerDemand with_bytes;
  with_bytes.tflops16 = 800, with_bytes.TBps = 2;
  PowerDemand without;
  without.tflops16 = 800;
  EXPECT_LT(pm->sustained_clock_mhz(with_bytes), pm->sustained_clock_mhz(without));
}

// A GEMM priced at a clock below the tables' reference takes longer by the table's exponent, and the
// derived H100 profile carries the law (same chip and board limit) while the A100 has none.
TEST(PowerModel, ClockedCostModelAndDerivedProfiles) {
  const CalibratedCostModel& cm = h200();
  ASSERT_GT(cm.reference_clock_mhz(), 0);
  GemmShape g;
  g.m = g.n = g.k = 8192;
  const double ref = cm.gemm(g).seconds;
  const ClockedCostModel slow(cm, 0.8 * cm.reference_clock_mhz());
  EXPECT_NEAR(slow.gemm(g).seconds / ref, std::pow(1 / 0.8, cm.clock_exponent(Dtype::BF16)), 1e-9);
  EXPECT_DOUBLE_EQ(slow.memory_bound(1e9).seconds, cm.memory_bound(1e9).seconds);
  const auto h100 = make_calibrated_cost_model("h100-sxm5-80gb");
  ASSERT_NE(h100->power_model(), nullptr);
  EXPECT_NEAR(h100->reference_clock_mhz(), cm.reference_clock_mhz(), 1e-6);
  EXPECT_EQ(make_calibrated_cost_model("a100-sxm4-80gb")->power_model(), nullptr);
}

// Eager framework kernels at a clock below the top one: each slows by its measured clock share
// (framework.clock_share, bench/pytorch/elementwise_clock.py): a pure stream keeps its time, RoPE
// (fp32 angles per element) slows with the clock — at the clock a ClockedCostModel prices at, and
// at the GEMM tables' reference clock for the calibrated model itself; not at or above the top
// clock, not where the limiter's walk asks for it, not without a power law.
TEST(PowerModel, EagerKernelsFollowTheClockByTheirMeasuredShare) {
  const CalibratedCostModel& cm = h200();
  ASSERT_NE(cm.power_model(), nullptr);
  const Profile* p = cm.measured_profile();
  ASSERT_TRUE(p && p->framework);
  const double rope = eager_op_clock_share(*p, "rope_bf16_fwd"),
               stream = eager_op_clock_share(*p, "add_bf16");
  EXPECT_GT(rope, 0.4);  // measured 0.74 (2026-12-04)
  EXPECT_LT(stream, 0.05);
  EXPECT_DOUBLE_EQ(eager_op_clock_share(*p, "no_such_op"), 0.0);
  const double top = cm.power_model()->max_clock_mhz(), f = 0.75 * top;
  const ClockedCostModel capped(cm, f);
  EXPECT_NEAR(capped.memory_clock_factor(rope), (1 - rope) + rope * top / f, 1e-12);
  EXPECT_GT(capped.memory_clock_factor(rope), 1.1);
  EXPECT_DOUBLE_EQ(capped.memory_clock_factor(0.0), 1.0);
  EXPECT_DOUBLE_EQ(capped.memory_clock_factor(2.0), capped.memory_clock_factor(1.0));  // clamped
  EXPECT_DOUBLE_EQ(ClockedCostModel(cm, top).memory_clock_factor(rope), 1.0);
  EXPECT_DOUBLE_EQ(ClockedCostModel(cm, f, /*eager_kernels_follow=*/false).memory_clock_factor(rope), 1.0);
  // The calibrated model answers at the GEMM tables' reference clock, below the top one.
  EXPECT_NEAR(cm.memory_clock_factor(rope), (1 - rope) + rope * top / cm.reference_clock_mhz(), 1e-12);
  EXPECT_GT(cm.memory_clock_factor(rope), 1.0);
  EXPECT_DOUBLE_EQ(
      ClockedCostModel(*make_calibrated_cost_model("a100-sxm4-80gb"), 1000).memory_clock_factor(rope),
      1.0);  // no power law
}

// A user's profile with a small power section (the fuzzer's seed): parsed, fitted, answering.
TEST(PowerModel, SmallUserSectionIsFitted) {
  Profile p = load_profile_file(std::string(INFRAPLAN_SOURCE_DIR) + "/fuzz/seeds/fuzz_profile/power.json");
  ASSERT_TRUE(p.power.has_value());
  const GpuSpec& gpu = find_gpu(p.gpu);
  CalibratedCostModel cm(std::move(p), gpu);
  ASSERT_NE(cm.power_model(), nullptr);
  EXPECT_NEAR(cm.reference_clock_mhz(), 1759, 1e-9);
  PowerDemand heavy;
  heavy.tflops16 = 800;
  const double f = cm.power_model()->sustained_clock_mhz(heavy);
  EXPECT_GT(f, 0);
  EXPECT_LT(f, 1980);
  // Its two idle mixtures with recorded phases give the limiter a time constant.
  EXPECT_GT(cm.power_limiter_tau_s(), 0);
  EXPECT_LT(cm.power_limiter_tau_s(), 4.0);
}

// Attention's own term: fitted on the attention fit points alone (PyTorch SDPA held under the cap,
// bench/pytorch/attention_power.py), it draws more per matmul FLOP than a GEMM; the other parameters
// are those of the fit without attention points; a section without attention points prices
// attention as GEMM FLOPs.
TEST(PowerModel, AttentionHasItsOwnDrawPerFlop) {
  const PowerModel* pm = h200().power_model();
  ASSERT_NE(pm, nullptr);
  ASSERT_TRUE(pm->knows_attention());
  const auto& p = pm->params();
  EXPECT_GT(p.w_per_attn_tflops16, 1.1 * p.w_per_tflops16);
  EXPECT_LT(p.w_per_attn_tflops16, 2.0 * p.w_per_tflops16);
  PowerDemand gemm, attn;
  gemm.tflops16 = attn.attn_tflops16 = 500;
  EXPECT_LT(pm->sustained_clock_mhz(attn), pm->sustained_clock_mhz(gemm));

  Profile::PowerSection s = h200().measured_profile()->power.value();
  std::vector<Profile::PowerPoint> kept;
  for (const auto& q : s.points)
    if (!q.attention) kept.push_back(q);
  s.points = kept;
  const PowerModel without(s);
  EXPECT_FALSE(without.knows_attention());
  EXPECT_DOUBLE_EQ(without.params().w_per_attn_tflops16, without.params().w_per_tflops16);
  EXPECT_DOUBLE_EQ(without.params().base_w, p.base_w);
  EXPECT_DOUBLE_EQ(without.params().exponent, p.exponent);
}

// Operands (docs/accuracy.md, "Does the operands' distribution move the clock?"): the H200 section's
// GEMM points are uniform ±1 and it records the clock ratio a capped GEMM keeps with normal operands;
// the law prices framework GEMMs with e16 · c^(−γ), so a GEMM-only demand that the fitted law caps
// settles about c times lower, while the checks keep the fit points' own law. A section whose points
// were normal, or without the ratio, is priced as fitted.
TEST(PowerModel, NormalOperandsDrawMoreThanTheProbesUniformOnes) {
  const PowerModel* pm = h200().power_model();
  ASSERT_NE(pm, nullptr);
  Profile::PowerSection s = h200().measured_profile()->power.value();
  ASSERT_EQ(s.gemm_operands, "uniform");
  const double c = s.normal_operand_clock_ratio;
  ASSERT_GT(c, 0.9);
  ASSERT_LT(c, 1.0);
  const auto& fit = pm->fitted_params();
  const auto& law = pm->params();
  EXPECT_NEAR(pm->normal_operand_factor(), std::pow(c, -fit.exponent), 1e-12);
  EXPECT_NEAR(law.w_per_tflops16 / fit.w_per_tflops16, pm->normal_operand_factor(), 1e-12);
  EXPECT_DOUBLE_EQ(law.base_w, fit.base_w);
  EXPECT_DOUBLE_EQ(law.w_per_TBps, fit.w_per_TBps);
  EXPECT_DOUBLE_EQ(law.w_per_attn_tflops16, fit.w_per_attn_tflops16);  // fitted on framework attention
  EXPECT_NEAR(law.w_per_tflops8 / fit.w_per_tflops8, pm->normal_operand_factor(), 1e-12);

  s.normal_operand_clock_ratio = 0;
  const PowerModel as_fitted(s);
  EXPECT_DOUBLE_EQ(as_fitted.normal_operand_factor(), 1.0);
  EXPECT_DOUBLE_EQ(as_fitted.params().w_per_tflops16, fit.w_per_tflops16);
  PowerDemand gemm;
  gemm.tflops16 = 700;
  const double f_uniform = as_fitted.sustained_clock_mhz(gemm), f_normal = pm->sustained_clock_mhz(gemm);
  ASSERT_LT(f_uniform, pm->max_clock_mhz() - 50);
  EXPECT_NEAR(f_normal / f_uniform, c, 0.004);
  ASSERT_EQ(as_fitted.checks().size(), pm->checks().size());
  for (std::size_t i = 0; i < pm->checks().size(); ++i)
    EXPECT_DOUBLE_EQ(as_fitted.checks()[i].modelled_mhz, pm->checks()[i].modelled_mhz);

  s.normal_operand_clock_ratio = c;
  s.gemm_operands = "normal";
  EXPECT_DOUBLE_EQ(PowerModel(s).normal_operand_factor(), 1.0);
}

TEST(PowerModel, RefusesTooFewOrUncappedPoints) {
  Profile::PowerSection s;
  s.limit_w = 700, s.max_clock_mhz = 1980;
  Profile::PowerPoint p;
  p.role = "fit", p.flops = 1e9, p.bytes = 1e8, p.burst_seconds = 1e-3, p.sustained_seconds = 1e-3,
  p.clock_mhz = 1980, p.power_w = 400;
  s.points = {p, p, p};
  EXPECT_THROW(PowerModel{s}, Error);  // none capped
  s.points.resize(1);
  EXPECT_THROW(PowerModel{s}, Error);
}

}  // namespace
}  // namespace infraplan::hw

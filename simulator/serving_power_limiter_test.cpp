// Serving steps under the board's power limiter (BackendOptions::power_limited): long prefill steps
// settle at the capped clock, steps after idle time start at the top clock, weight-streaming decode
// steps keep their time at any clock, and profiles without a power law price at the tables' clock.
#include <gtest/gtest.h>

#include "hardware/calibrated_cost_model.hpp"
#include "simulator/execution_backend.hpp"

using namespace infraplan;
using namespace infraplan::sim::serve;

namespace {

const hw::CalibratedCostModel& h200() {
  static const auto cm = hw::make_calibrated_cost_model("h200-sxm-141gb");
  return *cm;
}

BatchShape prefill(std::int64_t tokens, double start_s) {
  BatchShape b;
  b.items.push_back({tokens, tokens, true, true});
  b.start_s = start_s;
  return b;
}

BatchShape decodes(int n, std::int64_t ctx, double start_s) {
  BatchShape b;
  for (int i = 0; i < n; ++i) b.items.push_back({1, ctx, false, true});
  b.start_s = start_s;
  return b;
}

BackendOptions limited(bool on) {
  BackendOptions o = BackendOptions::without_host();
  o.power_limited = on;
  return o;
}

}  // namespace

TEST(ServingPowerLimiter, BackToBackPrefillsSettleAtTheCappedClock) {
  ASSERT_GT(h200().power_limiter_tau_s(), 0);
  strat::ServingConfig s;
  SimulatedBackend tables(model::preset("llama2-7b"), s, h200(), nullptr, limited(false));
  SimulatedBackend lim(model::preset("llama2-7b"), s, h200(), nullptr, limited(true));
  const double top = h200().power_model()->max_clock_mhz();
  double t = 0;
  StepCost first = lim.step(prefill(8192, t));
  EXPECT_EQ(tables.step(prefill(8192, 0)).clock_mhz, 0) << "the tables' clock is reported as 0";
  // The first heavy step after an idle GPU runs part of its work at the top clock.
  EXPECT_GT(first.clock_mhz, 1400);
  EXPECT_LT(first.clock_mhz, top);
  t += first.total_s;
  StepCost later;
  for (int i = 0; i < 10; ++i) {
    later = lim.step(prefill(8192, t));
    t += later.total_s;
  }
  // Back to back, the average power sits at the limit: the whole step at the law's clock, below the
  // tables' reference clock, and slower than priced there.
  EXPECT_LT(later.clock_mhz, first.clock_mhz);
  EXPECT_LT(later.clock_mhz, h200().reference_clock_mhz());
  EXPECT_GT(later.total_s, tables.step(prefill(8192, 0)).total_s);
  // After two seconds of idle time the average has fallen: a short prefill runs at the top clock,
  // faster than at the tables' clock.
  const StepCost rested = lim.step(prefill(512, t + 2.0));
  EXPECT_DOUBLE_EQ(rested.clock_mhz, top);
  EXPECT_LT(rested.total_s, tables.step(prefill(512, 0)).total_s);
}

TEST(ServingPowerLimiter, WeightStreamingDecodeKeepsItsTime) {
  strat::ServingConfig s;
  SimulatedBackend tables(model::preset("llama2-7b"), s, h200(), nullptr, limited(false));
  SimulatedBackend lim(model::preset("llama2-7b"), s, h200(), nullptr, limited(true));
  const StepCost a = lim.step(decodes(1, 1024, 0)), b = tables.step(decodes(1, 1024, 0));
  EXPECT_DOUBLE_EQ(a.clock_mhz, h200().power_model()->max_clock_mhz());
  // Batch 1: the GEMMs stream their weights; the top clock gains them almost nothing.
  EXPECT_NEAR(a.gemm_s / b.gemm_s, 1.0, 0.03);
  EXPECT_DOUBLE_EQ(a.attention_s, b.attention_s) << "decode attention does not follow the clock";
}

TEST(ServingPowerLimiter, SameStepsSameTimesAndNoLawNoLimiter) {
  strat::ServingConfig s;
  auto run = [&](const hw::CostModel& cm) {
    SimulatedBackend b(model::preset("llama3-8b"), s, cm, nullptr, limited(true));
    std::vector<double> out;
    double t = 0;
    for (int i = 0; i < 20; ++i) {
      const StepCost c = b.step(i % 5 == 0 ? prefill(4096, t) : decodes(64, 2048, t));
      out.push_back(c.total_s);
      out.push_back(c.clock_mhz);
      t += c.total_s + (i % 7 == 0 ? 0.05 : 0.0);
    }
    return out;
  };
  EXPECT_EQ(run(h200()), run(h200())) << "deterministic";
  const auto a100 = hw::make_calibrated_cost_model("a100-sxm4-80gb");
  ASSERT_EQ(a100->power_model(), nullptr);
  for (std::size_t i = 1; i < 40; i += 2) EXPECT_EQ(run(*a100)[i], 0) << "no power law: the tables' clock";
}

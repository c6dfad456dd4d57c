#include "hardware/power_limiter.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "common/error.hpp"
#include "hardware/calibrated_cost_model.hpp"

namespace infraplan::hw {
namespace {

const CalibratedCostModel& h200() {
  static const auto cm = make_calibrated_cost_model("h200-sxm-141gb");
  return *cm;
}

// τ fitted on the embedded H200 profile's GEMM-and-idle mixtures; every mixture with recorded
// phases printed against the limiter (docs/calibration.md quotes the table).
TEST(PowerLimiter, FitsTheH200Mixtures) {
  const double tau = h200().power_limiter_tau_s();
  std::printf("limiter time constant: %.1f ms (idle draw %.0f W)\n", tau * 1e3, h200().idle_power_w());
  std::printf("| role | mixture | measured period | modelled | error |\n|---|---|---|---|---|\n");
  double worst_fit = 0, worst_idle_holdout = 0;
  for (const auto& c : h200().power_limiter_checks()) {
    const double e = c.modelled_s / c.measured_s - 1;
    std::printf("| %s | %s | %.2f ms | %.2f ms | %+.1f%% |\n", c.role.c_str(), c.label.c_str(), c.measured_s * 1e3,
                c.modelled_s * 1e3, 100 * e);
    if (c.role == "fit") worst_fit = std::max(worst_fit, std::fabs(e));
    if (c.role == "holdout" && c.label.find("idle") != std::string::npos)
      worst_idle_holdout = std::max(worst_idle_holdout, std::fabs(e));
  }
  EXPECT_GT(tau, 0.005);
  EXPECT_LT(tau, 1.0);
  // Run of 2026-12-01 (docs/data/calib/h200_power_probe.json).
  EXPECT_LT(worst_fit, 0.03);
  EXPECT_LT(worst_idle_holdout, 0.03);
}

TEST(PowerLimiter, HeavyPhaseRunsAtTheTopClockUntilTheAverageReachesTheLimit) {
  PowerLimiter lim(700, 100, 0.05);
  // A phase drawing 1000 W at the top clock after a long idle: P̄ climbs from 100 W and reaches
  // 700 W after τ·ln(900/300); the rest runs at the capped pace (1.2× longer).
  const double t1 = 0.05 * std::log(900.0 / 300.0);
  auto r = lim.run({1000, 0.2, 0.24});
  EXPECT_NEAR(r.top_fraction, t1 / 0.2, 1e-12);
  EXPECT_NEAR(r.seconds, t1 + (0.2 - t1) * 1.2, 1e-12);
  EXPECT_DOUBLE_EQ(lim.average_power_w(), 700);
  // Straight after, the same phase is capped from the start.
  r = lim.run({1000, 0.1, 0.12});
  EXPECT_DOUBLE_EQ(r.top_fraction, 0);
  EXPECT_DOUBLE_EQ(r.seconds, 0.12);
  // A light phase never is, and lets the average fall; so does idle time.
  r = lim.run({500, 0.05, 0.05});
  EXPECT_DOUBLE_EQ(r.seconds, 0.05);
  EXPECT_NEAR(lim.average_power_w(), 500 + 200 * std::exp(-1.0), 1e-9);
  const double before = lim.average_power_w();
  lim.idle(0.05);
  EXPECT_NEAR(lim.average_power_w(), 100 + (before - 100) * std::exp(-1.0), 1e-9);
  // A short heavy phase after idle finishes before the average reaches the limit.
  PowerLimiter fresh(700, 100, 0.05);
  r = fresh.run({1000, 0.001, 0.0012});
  EXPECT_DOUBLE_EQ(r.seconds, 0.001);
  EXPECT_DOUBLE_EQ(r.top_fraction, 1);
}

TEST(PowerLimiter, RefusesNonsense) {
  EXPECT_THROW(PowerLimiter(0, 100, 0.05), Error);
  EXPECT_THROW(PowerLimiter(700, -1, 0.05), Error);
  EXPECT_THROW(PowerLimiter(700, 100, 0), Error);
  EXPECT_THROW(PowerLimiter(700, 100, std::nan("")), Error);
}

}  // namespace
}  // namespace infraplan::hw

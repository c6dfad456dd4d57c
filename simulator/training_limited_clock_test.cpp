// The power limiter walking a training step's timeline (limited_step_clock.hpp) on hand-built
// timelines: heavy GEMMs back to back settle at the law's clock for them; the same GEMMs, each
// shorter than the limiter's climb, between idle gaps longer than its averaging time run at the top
// clock; a collective beside the gaps draws more than idle and holds the clock lower.
#include <gtest/gtest.h>

#include "hardware/calibrated_cost_model.hpp"
#include "common/error.hpp"
#include "hardware/clocked_cost_model.hpp"
#include "simulator/limited_step_clock.hpp"

namespace infraplan::sim::train {
namespace {

struct Timeline {
  strat::WorkGraph top, low;
  ExecutionTimes x;
  std::vector<double> traffic;
};

/// `n` GEMMs of `seconds` (at the top clock, 8192×8192×8192 bf16 FLOPs each) starting every
/// `period` seconds; at the low clock each takes `low_ratio` times as long. With `comm_bytes` > 0
/// a collective of the same lane fills each gap.
Timeline gemms(int n, double seconds, double period, double low_ratio, double comm_bytes = 0) {
  Timeline t;
  t.top.lanes.push_back({});
  for (int i = 0; i < n; ++i) {
    strat::Op op;
    op.name = "gemm", op.seconds = seconds, op.flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
    t.top.ops.push_back(op);
    op.seconds = seconds * low_ratio;
    t.low.ops.push_back(op);
    t.x.start.push_back(i * period), t.x.end.push_back(i * period + seconds);
    t.traffic.push_back(0);
    if (comm_bytes > 0 && period > seconds) {
      strat::Op c;
      c.name = "allgather", c.group = 0, c.stream = strat::Stream::TP, c.bytes = comm_bytes;
      t.top.ops.push_back(c), t.low.ops.push_back(c);
      t.x.start.push_back(i * period + seconds), t.x.end.push_back((i + 1) * period);
      t.traffic.push_back(comm_bytes);
    }
  }
  t.top.groups.push_back({0, 1});
  t.low.groups = t.top.groups;
  t.x.makespan = n * period;
  return t;
}

StepClock clock_of(const Timeline& t, const hw::CostModel& cost) {
  LimitedClockInput in;
  in.top_graph = &t.top, in.top_times = &t.x, in.low_graph = &t.low;
  in.low_mhz = 990;
  in.comm_traffic_bytes = t.traffic;
  return limited_step_clock(*cost.power_model(), cost, in);
}

TEST(LimitedStepClock, FollowsTheLimiterNotTheAverage) {
  const auto cost = hw::make_calibrated_cost_model("h200-sxm-141gb");
  ASSERT_NE(cost->power_model(), nullptr);
  ASSERT_GT(cost->power_limiter_tau_s(), 0.0);
  const hw::PowerModel& law = *cost->power_model();
  const double top = law.max_clock_mhz();
  // 8192³ at ~830 TFLOP/s: 1.33 ms. How such a GEMM's time follows the clock: the profile's own.
  const double s = 1.33e-3;
  const double ratio = hw::ClockedCostModel(*cost, 990).factor(Dtype::BF16) /
                       hw::ClockedCostModel(*cost, top).factor(Dtype::BF16);

  // Back to back for 2 s: at the cap, near the law's clock for the GEMM alone.
  hw::PowerDemand d;
  d.tflops16 = 2.0 * 8192.0 * 8192.0 * 8192.0 * 1e-12 / s;
  const double alone = law.sustained_clock_mhz(d);
  const StepClock busy = clock_of(gemms(1500, s, s, ratio), *cost);
  EXPECT_TRUE(busy.capped());
  EXPECT_NEAR(busy.mhz / alone, 1.0, 0.02);
  EXPECT_NEAR(busy.power_w, law.limit_w(), 10.0);
  EXPECT_GT(busy.time_constant_s, 0.0);

  // One GEMM every 200 ms (gaps ≫ τ, the GEMM far shorter than the climb to the limit): top clock,
  // although the law at the GEMM's own demand would cap it.
  const StepClock sparse = clock_of(gemms(20, s, 0.2, ratio), *cost);
  EXPECT_FALSE(sparse.capped());
  EXPECT_DOUBLE_EQ(sparse.mhz, top);
  EXPECT_LT(sparse.power_w, 200.0);

  // Half busy at a period far below τ: the limiter sees the average, between the two.
  const StepClock half = clock_of(gemms(1500, s, 2 * s, ratio), *cost);
  EXPECT_GT(half.mhz, busy.mhz + 50);
  // The same with a collective's traffic filling the gaps instead of idle: a lower clock.
  const StepClock half_comm = clock_of(gemms(1500, s, 2 * s, ratio, 3e12 * s), *cost);  // 3 TB/s
  EXPECT_LT(half_comm.mhz, half.mhz);
  EXPECT_GT(half_comm.mhz, busy.mhz);
}

TEST(LimitedStepClock, RefusesWithoutTheTimeConstant) {
  const auto cost = hw::make_calibrated_cost_model("h200-sxm-141gb");
  const Timeline t = gemms(2, 1e-3, 2e-3, 1.2);
  LimitedClockInput in;
  in.top_graph = &t.top, in.top_times = &t.x;  // no low-clock graph
  EXPECT_THROW(limited_step_clock(*cost->power_model(), *cost, in), Error);
}

}  // namespace
}  // namespace infraplan::sim::train

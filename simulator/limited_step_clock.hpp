#pragma once
// The SM clock of a training step under the board's power limiter (hw::PowerLimiter), from the
// step's own timeline. The step is simulated at the top clock; the busiest GPU's compute stream is
// walked op by op in time order: each op draws what the profile's power law gives its matmul FLOPs
// and memory-bound bytes over its time, takes the time the clock the law allows it gives it (the
// op's time at a second, lower clock fixes how its time follows the clock), and the gaps between
// ops draw the idle power (or, while a collective of the GPU runs, what the law gives its memory
// traffic; an op overlapping a collective draws both). The limiter's running average (time constant τ, calibrated on the
// power probe's mixtures) decides how much of each op runs at the top clock. Steps repeat, so the
// timeline is walked twice and the second pass counts. The answer is the one clock at which the
// lane's compute takes as long as the limiter's mix of clocks makes it take; the step is then
// priced again at that clock (hw::ClockedCostModel).
//
// Unlike the step-average law (sustained_clock.hpp), this sees that a pipeline's steady phase of
// back-to-back GEMMs runs at the cap while its fill and drain idle, and that a host-bound eager
// step with short kernels between long gaps never reaches the cap.
#include "hardware/cost_model.hpp"
#include "hardware/power_model.hpp"
#include "simulator/sustained_clock.hpp"
#include "simulator/work_graph_executor.hpp"
#include "strategies/work_graph.hpp"

namespace infraplan::sim::train {

struct LimitedClockInput {
  const strat::WorkGraph* top_graph = nullptr;  ///< the step priced at the top clock
  const ExecutionTimes* top_times = nullptr;    ///< its execution
  const strat::WorkGraph* low_graph = nullptr;  ///< the same graph priced at `low_mhz`
  double low_mhz = 0;                           ///< below the top clock
  int lane = 0;                                 ///< the GPU whose timeline is walked
  bool eight_bit = false;                       ///< matmuls in fp8/int8
  /// Per op of the graph: the HBM bytes a communication op of the lane moves on this GPU (its
  /// wire bytes read and written), empty or 0 for the rest; while it runs it draws what the law
  /// gives that traffic, idle stretches without one draw the board's idle power.
  std::vector<double> comm_traffic_bytes;
};

/// The clock the limiter holds `in.lane`'s compute to. `cost` gives the clock's time factor (the
/// profile's exponent); τ and the idle draw come from it too (τ > 0 required).
StepClock limited_step_clock(const hw::PowerModel& law, const hw::CostModel& cost, const LimitedClockInput& in);

}  // namespace infraplan::sim::train

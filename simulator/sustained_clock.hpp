#pragma once
// The SM clock a training step runs at: the profile's power law (hardware/power_model.hpp) applied
// to the step's own work. The step is priced once at the top clock; its busiest GPU's matmul FLOPs
// and memory-bound bytes over that time give its demand; the law gives the clock at which that
// demand meets the board's limit; the step is priced again at that clock (hw::ClockedCostModel).
// Where the profile also has the limiter's averaging time, the simulation walks the step's
// timeline through the limiter instead (limited_step_clock.hpp); the closed-form estimate keeps
// this average.
#include "common/json_util.hpp"
#include "hardware/power_model.hpp"

namespace infraplan::sim {

struct StepClock {
  double mhz = 0;            ///< the clock the step is priced at
  double reference_mhz = 0;  ///< the clock the profile's GEMM tables refer to
  double max_mhz = 0;        ///< the top clock
  double power_w = 0;        ///< modelled board power of the busiest GPU at `mhz`
  double limit_w = 0;        ///< the board's power limit
  hw::PowerDemand demand;    ///< the busiest GPU's rates at the top clock (over its busy time under the limiter)
  /// > 0: the clock came from the power limiter walking the step's timeline with this averaging
  /// time (limited_step_clock.hpp); 0: from the law on the step's average demand.
  double time_constant_s = 0;
  /// The law's matmul energy for a framework's normal operands over its fitted value (1: the same;
  /// hw::PowerModel::normal_operand_factor).
  double operand_energy_factor = 1;
  bool capped() const { return mhz < max_mhz - 0.5; }
  /// {clock_mhz, reference_clock_mhz, max_clock_mhz, power_w, limit_w, power_capped, demand:
  /// {tflops16, tflops8, TBps, elementwise_TBps}, time_constant_s, operand_energy_factor, source}.
  Json to_json() const;
  /// One line for tables: "1,512 MHz sustained (power-capped: 700 W; tables at 1,759 MHz)".
  std::string summary() const;
};

/// The clock for a step whose busiest GPU runs `flops` matmul FLOPs (8-bit ones when `eight_bit`)
/// and moves `bytes` through memory-bound kernels in `seconds` at the top clock.
StepClock step_clock(const hw::PowerModel& pm, double reference_mhz, double flops, bool eight_bit, double bytes,
                     double seconds);

}  // namespace infraplan::sim

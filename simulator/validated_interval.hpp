#pragma once
// The 80% interval a prediction carries from the profile's validation record
// (CostSetup::validation_error, hardware/validation_error.hpp): where measured / predicted fell on
// the runs the model was checked against, applied to this prediction — whole training steps at the
// tables' clock, the mini-engine's TTFT / TPOT p50 with the limiter as by default. Absent where the
// profile records none or the prediction is not of the kind validated (another clock, another
// serving engine preset). docs/accuracy.md, "Validated error".
#include <optional>
#include <string>
#include <utility>

#include "common/json_util.hpp"
#include "simulator/cost_setup.hpp"
#include "simulator/serving_sim.hpp"

namespace infraplan::sim {

struct ValidatedInterval {
  std::pair<double, double> seconds;  ///< [low, high]
  std::string note;                   ///< what it rests on (hw::ValidationError::summary)
};

/// The interval of a training step of `iteration_time_s` (nullopt at the sustained clock, or
/// without a record).
std::optional<ValidatedInterval> training_interval(const CostSetup& cs, double iteration_time_s,
                                                   bool sustained_clock);

/// {"ttft_interval_ms": {"p50": [lo, hi]}, "tpot_interval_ms": {...}} for the metrics object and
/// the note under "interval"; null when none applies (`power_limited`: the run's limiter setting).
struct ServingInterval {
  Json metrics;  ///< keys to merge into "metrics"
  std::string note;
  std::optional<std::pair<double, double>> ttft_ms, tpot_ms;
};
std::optional<ServingInterval> serving_interval(const CostSetup& cs, const serve::ServingSetup& setup,
                                                const serve::ServingMetrics& m, bool power_limited);

}  // namespace infraplan::sim

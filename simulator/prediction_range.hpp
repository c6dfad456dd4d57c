#pragma once
// How sure a prediction is: the same simulation again with every op priced at the low and at the
// high edge of the spread the profile measured for its kind (GEMMs, attention, memory-bound
// kernels, framework host costs across machine starts; hw::SpreadCostModel). The result is a range next to the point prediction:
// `iteration_time_range_s` [low, high] for training, `ttft_range_ms`, `tpot_range_ms`,
// `e2e_range_ms` ({p50, p90, p95, p99, mean: [low, high]}) for serving (docs/accuracy.md,
// "Uncertainty bands"). Communication carries no band (no multi-machine data).
#include <array>
#include <optional>
#include <utility>

#include "collectives/comm_model.hpp"
#include "hardware/cluster.hpp"
#include "hardware/cost_model.hpp"
#include "hardware/spread_cost_model.hpp"
#include "common/json_util.hpp"
#include "model/model_spec.hpp"
#include "simulator/serving_sim.hpp"
#include "simulator/training_sim.hpp"
#include "strategies/training_config.hpp"

namespace infraplan::sim {

/// [low, high] seconds.
using TimeRange = std::array<double, 2>;

/// The iteration time at the two edges (simulate_training on the scaled models, options `o`
/// without graph or trace); nullopt when `bands` knows no spread.
std::optional<TimeRange> training_time_range(const model::ModelSpec& m, const hw::Cluster& c,
                                             const strat::TrainingConfig& t, const hw::CostModel& cost,
                                             const coll::CommModel& comm, const hw::SpreadBands& bands,
                                             train::TrainingOptions o);
/// The same for the closed-form estimate (at the sustained clock when `sustained_clock`, as the
/// estimate it brackets).
std::optional<TimeRange> estimate_time_range(const model::ModelSpec& m, const hw::Cluster& c,
                                             const strat::TrainingConfig& t, const hw::CostModel& cost,
                                             const coll::CommModel& comm, const hw::SpreadBands& bands,
                                             bool sustained_clock = false);

/// Serving latencies at the two edges of the band.
struct ServingRange {
  serve::ServingMetrics low, high;  ///< metrics of the run at each edge
  /// {"ttft_range_ms": {p50: [lo, hi], p90, p95, p99, mean}, "tpot_range_ms": …, "e2e_range_ms": …,
  /// "itl_range_ms": …}, each pair ordered (lo ≤ hi).
  Json to_json() const;
};
/// nullopt when `bands` knows no spread.
std::optional<ServingRange> serving_range(const serve::ServingSetup& setup, const hw::CostModel& cost,
                                          const hw::SpreadBands& bands);

/// "measured spread: gemm −4% … +6%, attention …" (one line for tables; "" without bands).
std::string spread_summary(const hw::SpreadBands& bands);

}  // namespace infraplan::sim

#include "simulator/prediction_range.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace infraplan::sim {
namespace {

TimeRange ordered(double a, double b) { return {std::min(a, b), std::max(a, b)}; }

Json percentile_ranges(const serve::Percentiles& lo, const serve::Percentiles& hi) {
  auto pair = [](double a, double b) {
    auto r = [](double x) { return std::round(x * 1e6) / 1e6; };  // as Percentiles::to_json rounds
    TimeRange o = ordered(a, b);
    return Json::array({r(o[0]), r(o[1])});
  };
  return {{"p50", pair(lo.p50, hi.p50)}, {"p90", pair(lo.p90, hi.p90)}, {"p95", pair(lo.p95, hi.p95)},
          {"p99", pair(lo.p99, hi.p99)}, {"mean", pair(lo.mean, hi.mean)}};
}

}  // namespace

std::optional<TimeRange> training_time_range(const model::ModelSpec& m, const hw::Cluster& c,
                                             const strat::TrainingConfig& t, const hw::CostModel& cost,
                                             const coll::CommModel& comm, const hw::SpreadBands& bands,
                                             train::TrainingOptions o) {
  if (!bands.known()) return std::nullopt;
  o.keep_graph = false;
  hw::SpreadCostModel low(cost, bands, hw::SpreadCostModel::Edge::Low),
      high(cost, bands, hw::SpreadCostModel::Edge::High);
  const double a = train::simulate_training(m, c, t, low, comm, o).iteration_time_s;
  const double b = train::simulate_training(m, c, t, high, comm, o).iteration_time_s;
  return ordered(a, b);
}

std::optional<TimeRange> estimate_time_range(const model::ModelSpec& m, const hw::Cluster& c,
                                             const strat::TrainingConfig& t, const hw::CostModel& cost,
                                             const coll::CommModel& comm, const hw::SpreadBands& bands,
                                             bool sustained_clock) {
  if (!bands.known()) return std::nullopt;
  hw::SpreadCostModel low(cost, bands, hw::SpreadCostModel::Edge::Low),
      high(cost, bands, hw::SpreadCostModel::Edge::High);
  return ordered(train::estimate_training(m, c, t, low, comm, nullptr, sustained_clock).iteration_time_s,
                 train::estimate_training(m, c, t, high, comm, nullptr, sustained_clock).iteration_time_s);
}

Json ServingRange::to_json() const {
  return {{"ttft_range_ms", percentile_ranges(low.ttft_ms, high.ttft_ms)},
          {"tpot_range_ms", percentile_ranges(low.tpot_ms, high.tpot_ms)},
          {"e2e_range_ms", percentile_ranges(low.e2e_ms, high.e2e_ms)},
          {"itl_range_ms", percentile_ranges(low.itl_ms, high.itl_ms)}};
}

std::optional<ServingRange> serving_range(const serve::ServingSetup& setup, const hw::CostModel& cost,
                                          const hw::SpreadBands& bands) {
  if (!bands.known()) return std::nullopt;
  hw::SpreadCostModel low(cost, bands, hw::SpreadCostModel::Edge::Low),
      high(cost, bands, hw::SpreadCostModel::Edge::High);
  ServingRange r;
  r.low = serve::simulate_serving(setup, low).metrics;
  r.high = serve::simulate_serving(setup, high).metrics;
  return r;
}

std::string spread_summary(const hw::SpreadBands& bands) {
  if (!bands.known()) return "";
  std::ostringstream o;
  o << "measured spread:";
  bool first = true;
  for (const char* kind : {"gemm", "attention", "memory", "host"})
    if (auto b = bands.of(kind)) {
      o << (first ? " " : ", ") << kind << " " << std::lround(100 * b->low) << "% … +"
        << std::lround(100 * b->high) << "%";
      first = false;
    }
  return o.str();
}

}  // namespace infraplan::sim

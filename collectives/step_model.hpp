#pragma once
// Time of one step of a flow pattern on the fabric, as SimGrid's CM02 model computes it without
// latency: flows share every link max-min fairly (progressive filling), rates are recomputed
// each time a flow finishes. The result per flow is its finish time per byte of step unit; the
// step's time for a unit of U bytes is then max over flows of (route latency + U x that time).
#include <string>
#include <vector>

#include "collectives/fabric.hpp"
#include "collectives/schedule.hpp"

namespace infraplan::coll {

/// One non-dominated (latency, per-unit time) pair of a pattern.
struct StepTerm {
  double latency_s = 0;   ///< route latency of the flow, seconds
  double s_per_byte = 0;  ///< bandwidth-phase finish time per byte of step unit, seconds
};

struct PatternCost {
  std::vector<StepTerm> terms;  ///< Pareto front (no term dominated by another)
  double max_latency_s = 0;     ///< largest route latency among the flows
  bool inter = false;           ///< some flow crosses nodes
  double max_src_fraction = 0;  ///< largest sum of fractions sent by one rank per step
  int bottleneck_link = -1;     ///< link that limits the slowest flow (-1: none)
  double bottleneck_Bps = 0;    ///< its bandwidth, bytes/s
  /// Bandwidth part + link latency of one step of `unit_bytes` (protocol efficiency `eff`).
  double step_seconds(double unit_bytes, double eff) const {
    double t = 0;
    for (const auto& s : terms) t = std::max(t, s.latency_s + unit_bytes * s.s_per_byte / eff);
    return t;
  }
};

/// Max-min fair finish times of `pattern` with one byte of unit (zero latency).
PatternCost pattern_cost(const net::Fabric& fabric, const FlowPattern& pattern);

}  // namespace infraplan::coll

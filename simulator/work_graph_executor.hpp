#pragma once
// Event-driven execution of a work graph: every (lane, stream) runs its ops one at a time in
// issue order; an op starts when its dependencies have finished and its stream is free; ops
// sharing a `join` (one collective seen from each member in exact mode) start together when the
// last member is ready and last as long as the slowest. Durations are the ops' `seconds`
// (cost model for compute, collective model for communication). Deterministic: same-time events
// are ordered by (time, sequence number).
#include <vector>

#include "strategies/work_graph.hpp"

namespace infraplan::sim::train {

struct ExecutionTimes {
  std::vector<double> start, end;  ///< per op, seconds from the start of the iteration
  /// Per op: the op whose end released it (dependency or previous op on its stream), -1 at t=0.
  std::vector<int> released_by;
  double makespan = 0;             ///< seconds
  int last_op = -1;                ///< an op ending at the makespan
};

/// Runs the graph. Throws infraplan::Error when some op can never start (a cycle).
ExecutionTimes execute_work_graph(const strat::WorkGraph& g);

}  // namespace infraplan::sim::train

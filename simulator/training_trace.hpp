#pragma once
// Chrome/Perfetto trace of a simulated training iteration: one process per node (pid = node),
// one thread per GPU stream (tid = local GPU × 8 + stream, named "gpu3 compute", "gpu3 dp", ...),
// one span per op with its layer, micro-batch, FLOPs and bytes as arguments.
#include <string>

#include "simulator/training_sim.hpp"

namespace infraplan::sim::train {

/// The trace JSON of a result simulated with `keep_graph`; throws when it has no graph.
std::string training_trace_json(const TrainingResult& r, const hw::Cluster& c, std::size_t max_events = 500000);

}  // namespace infraplan::sim::train

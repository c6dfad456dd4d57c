#include "simulator/training_trace.hpp"

#include <set>

#include "common/error.hpp"
#include "simulator/chrome_trace.hpp"

namespace infraplan::sim::train {

std::string training_trace_json(const TrainingResult& r, const hw::Cluster& c, std::size_t max_events) {
  const auto& g = r.graph;
  if (g.ops.empty() || r.times.start.size() != g.ops.size())
    throw Error("training trace: the result holds no timeline (simulate with keep_graph)");
  ChromeTrace tr(max_events);
  std::set<int> nodes;
  std::set<std::pair<int, int>> threads;
  auto where = [&](int lane, strat::Stream s) {
    const int rank = g.lanes[std::size_t(lane)].rank;
    const int node = c.node_of(rank), local = rank % c.gpus_per_node;
    return std::make_pair(node, local * 8 + int(s));
  };
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const auto& op = g.ops[i];
    auto [pid, tid] = where(op.lane, op.stream);
    if (nodes.insert(pid).second) tr.name_process(pid, "node " + std::to_string(pid));
    if (threads.insert({pid, tid}).second) {
      const int rank = g.lanes[std::size_t(op.lane)].rank;
      tr.name_thread(pid, tid, "gpu" + std::to_string(rank % c.gpus_per_node) + " (rank " + std::to_string(rank) +
                                   ", stage " + std::to_string(g.lanes[std::size_t(op.lane)].stage) + ") " +
                                   strat::stream_name(op.stream));
    }
    const double d = r.times.end[i] - r.times.start[i];
    if (d <= 0) continue;
    Json args = {{"layer", op.layer}, {"micro_batch", op.micro_batch}, {"pass", op.forward ? "forward" : "backward"}};
    if (op.flops > 0) args["flops"] = op.flops;
    if (op.bytes > 0) args["bytes"] = op.bytes;
    if (op.group >= 0) args["ranks"] = g.groups[std::size_t(op.group)].size();
    tr.span(pid, tid, op.name, strat::op_category_name(op.category), r.times.start[i], d, std::move(args));
  }
  return tr.str();
}

}  // namespace infraplan::sim::train

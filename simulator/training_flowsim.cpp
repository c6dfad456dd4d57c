#include "simulator/training_flowsim.hpp"

#include <queue>
#include <string>

#include "common/error.hpp"

namespace infraplan::sim::train {

coll::CollectiveOp to_coll(strat::CommOp c);

namespace {

// An order in which every op comes after its dependencies and after the previous op of its
// (lane, stream): FlowSim needs dependencies added first and serialises streams in add order.
std::vector<int> add_order(const strat::WorkGraph& g) {
  const std::size_t n = g.ops.size();
  std::vector<int> indeg(n, 0), next_on_stream(n, -1), last(g.lanes.size() * strat::kStreams, -1);
  std::vector<std::vector<int>> succ(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& op = g.ops[i];
    const std::size_t s = std::size_t(op.lane) * strat::kStreams + std::size_t(op.stream);
    if (last[s] >= 0) next_on_stream[std::size_t(last[s])] = int(i), ++indeg[i];
    last[s] = int(i);
    for (int d : op.deps) succ[std::size_t(d)].push_back(int(i)), ++indeg[i];
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.push(int(i));
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    auto release = [&](int j) {
      if (--indeg[std::size_t(j)] == 0) ready.push(j);
    };
    for (int j : succ[std::size_t(i)]) release(j);
    if (next_on_stream[std::size_t(i)] >= 0) release(next_on_stream[std::size_t(i)]);
  }
  if (order.size() != n) throw Error("work graph: dependency cycle (" + std::to_string(n - order.size()) + " ops)");
  return order;
}

}  // namespace

FlowSimRun execute_on_simgrid(const strat::WorkGraph& g, const coll::CommModel& comm, coll::FlowSimOptions options) {
  coll::FlowSim sim(comm.cluster(), comm.profile(), options);
  const std::size_t n = g.ops.size();
  std::vector<coll::TaskId> task(n, -1);
  std::vector<coll::TaskId> join_task(std::size_t(g.joins), -1);
  std::vector<coll::TaskId> deps;
  for (int i : add_order(g)) {
    const auto& op = g.ops[std::size_t(i)];
    const int rank = g.lanes[std::size_t(op.lane)].rank;
    deps.clear();
    for (int d : op.deps) deps.push_back(task[std::size_t(d)]);
    const std::string stream = strat::stream_name(op.stream);
    if (op.group < 0 || g.groups[std::size_t(op.group)].size() <= 1) {
      task[std::size_t(i)] = sim.add_compute(rank, op.seconds, deps, stream);
      continue;
    }
    const auto& ranks = g.groups[std::size_t(op.group)];
    if (op.comm == strat::CommOp::SendRecv) {
      const int peer = ranks[0] == rank ? ranks[1] : ranks[0];
      // One stream per ordered pair: a rank's sends and the transfers it receives do not queue
      // behind each other (NCCL posts them on separate channels).
      task[std::size_t(i)] = sim.add_transfer(rank, peer, op.bytes, deps,
                                              stream + " " + std::to_string(rank) + ">" + std::to_string(peer));
      continue;
    }
    if (op.join >= 0 && join_task[std::size_t(op.join)] >= 0) {
      // Another member already added the collective: this member waits for its own deps too.
      deps.push_back(join_task[std::size_t(op.join)]);
      task[std::size_t(i)] = sim.add_compute(rank, 0, deps, stream + "-wait");
      continue;
    }
    task[std::size_t(i)] = sim.add_collective(to_coll(op.comm), op.bytes, ranks, deps, stream);
    if (op.join >= 0) join_task[std::size_t(op.join)] = task[std::size_t(i)];
  }
  coll::SimResult r = sim.run();
  FlowSimRun out;
  out.activities = r.activities;
  out.wall_s = r.wall_s;
  auto& x = out.times;
  x.start.resize(n), x.end.resize(n), x.released_by.assign(n, -1);
  std::vector<int> prev_on_stream(g.lanes.size() * strat::kStreams, -1);
  for (std::size_t i = 0; i < n; ++i) {
    x.start[i] = r.tasks[std::size_t(task[i])].start_s;
    x.end[i] = r.tasks[std::size_t(task[i])].end_s;
    // Released by the latest-ending dependency or stream predecessor.
    const auto& op = g.ops[i];
    const std::size_t s = std::size_t(op.lane) * strat::kStreams + std::size_t(op.stream);
    int best = prev_on_stream[s];
    for (int d : op.deps)
      if (best < 0 || x.end[std::size_t(d)] > x.end[std::size_t(best)]) best = d;
    x.released_by[i] = best;
    prev_on_stream[s] = int(i);
    if (x.end[i] >= x.makespan) x.makespan = x.end[i], x.last_op = int(i);
  }
  return out;
}

}  // namespace infraplan::sim::train

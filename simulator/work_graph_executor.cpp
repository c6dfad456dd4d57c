#include "simulator/work_graph_executor.hpp"

#include <algorithm>
#include <queue>

#include "common/error.hpp"

namespace infraplan::sim::train {

namespace {

struct Event {
  double time;
  long long seq;
  int op;
  int version;  ///< an op whose end moved (contention) leaves stale events behind
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

}  // namespace

ExecutionTimes execute_work_graph(const strat::WorkGraph& g) {
  const std::size_t n = g.ops.size();
  ExecutionTimes x;
  x.start.assign(n, 0), x.end.assign(n, 0), x.released_by.assign(n, -1);
  // Dependents (CSR) and per-stream queues.
  std::vector<int> indeg(n, 0), off(n + 1, 0);
  for (const auto& op : g.ops)
    for (int d : op.deps) ++off[std::size_t(d) + 1];
  for (std::size_t i = 0; i < n; ++i) off[i + 1] += off[i];
  std::vector<int> succ(static_cast<std::size_t>(off[n]));
  std::vector<int> fill(off.begin(), off.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    indeg[i] = int(g.ops[i].deps.size());
    for (int d : g.ops[i].deps) succ[std::size_t(fill[std::size_t(d)]++)] = int(i);
  }
  const std::size_t streams = g.lanes.size() * strat::kStreams;
  std::vector<std::vector<int>> queue(streams);
  for (std::size_t i = 0; i < n; ++i)
    queue[std::size_t(g.ops[i].lane) * strat::kStreams + std::size_t(g.ops[i].stream)].push_back(int(i));
  std::vector<std::size_t> head(streams, 0);
  std::vector<char> busy(streams, 0);
  std::vector<int> prev_on_stream(streams, -1);
  std::vector<double> ready(n, 0);
  std::vector<int> ready_by(n, -1);
  std::vector<int> join_arrived(std::size_t(g.joins), 0), join_size(std::size_t(g.joins), 0);
  std::vector<std::vector<int>> join_members(std::size_t(g.joins));
  for (std::size_t i = 0; i < n; ++i)
    if (g.ops[i].join >= 0) {
      ++join_size[std::size_t(g.ops[i].join)];
      join_members[std::size_t(g.ops[i].join)].push_back(int(i));
    }
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  long long seq = 0;
  std::size_t done = 0;
  double now = 0;

  auto stream_of = [&](int op) { return std::size_t(g.ops[std::size_t(op)].lane) * strat::kStreams + std::size_t(g.ops[std::size_t(op)].stream); };
  // Contention: a matmul op on a lane's compute stream runs g.comm_slowdown times slower while a
  // communication op of the same lane runs (its kernels share the SMs and HBM). Overlapping
  // communication ops do not stack; the slowdown is accounted up to `slowed_until`.
  std::vector<int> running(streams, -1), version(n, 0);
  std::vector<double> slowed_until(n, 0);
  const bool contention = g.comm_slowdown > 1;
  auto is_matmul = [&](int op) {
    const auto& o = g.ops[std::size_t(op)];
    return o.stream == strat::Stream::Compute && o.flops > 0;
  };
  auto is_comm_stream = [](std::size_t s) {
    const auto st = strat::Stream(s % strat::kStreams);
    return st != strat::Stream::Compute && st != strat::Stream::Host;
  };
  auto slow = [&](int op, double until) {
    const std::size_t i = std::size_t(op);
    const double e = x.end[i], a = std::max(now, slowed_until[i]);
    if (until <= a || a >= e) return;
    const double k = g.comm_slowdown;
    const double end = (until - a) / k >= e - a ? a + (e - a) * k : until + (e - a) - (until - a) / k;
    slowed_until[i] = std::min(until, end);
    x.end[i] = end;
    events.push({end, seq++, op, ++version[i]});
  };
  auto launch = [&](int op, double duration) {
    const std::size_t s = stream_of(op);
    busy[s] = 1;
    running[s] = op;
    x.start[std::size_t(op)] = now;
    x.end[std::size_t(op)] = now + duration;
    slowed_until[std::size_t(op)] = now;
    events.push({now + duration, seq++, op, version[std::size_t(op)]});
    if (!contention) return;
    const std::size_t lane0 = s - s % strat::kStreams;
    if (is_matmul(op)) {
      double comm_end = now;
      for (std::size_t k = lane0; k < lane0 + strat::kStreams; ++k)
        if (is_comm_stream(k) && busy[k] == 1 && running[k] >= 0)
          comm_end = std::max(comm_end, x.end[std::size_t(running[k])]);
      slow(op, comm_end);
    } else if (is_comm_stream(s)) {
      const std::size_t cs = lane0 + std::size_t(strat::Stream::Compute);
      if (busy[cs] == 1 && running[cs] >= 0 && is_matmul(running[cs])) slow(running[cs], now + duration);
    }
  };
  auto try_stream = [&](std::size_t s) {
    if (busy[s] || head[s] >= queue[s].size()) return;
    const int op = queue[s][head[s]];
    if (indeg[std::size_t(op)] > 0) return;
    // Released by the later of its dependencies and the previous op on its stream.
    const int prev = prev_on_stream[s];
    x.released_by[std::size_t(op)] = (prev >= 0 && x.end[std::size_t(prev)] >= ready[std::size_t(op)]) ? prev : ready_by[std::size_t(op)];
    const int j = g.ops[std::size_t(op)].join;
    if (j < 0) {
      launch(op, g.ops[std::size_t(op)].seconds);
      return;
    }
    busy[s] = 2;  // reserved while waiting for the other members
    if (++join_arrived[std::size_t(j)] < join_size[std::size_t(j)]) return;
    double d = 0;
    for (int m : join_members[std::size_t(j)]) d = std::max(d, g.ops[std::size_t(m)].seconds);
    for (int m : join_members[std::size_t(j)]) {
      x.released_by[std::size_t(m)] = x.released_by[std::size_t(op)] >= 0 ? x.released_by[std::size_t(op)] : x.released_by[std::size_t(m)];
      launch(m, d);
    }
  };

  for (std::size_t s = 0; s < streams; ++s) try_stream(s);
  while (!events.empty()) {
    Event e = events.top();
    events.pop();
    if (e.version != version[std::size_t(e.op)]) continue;  // its end moved
    now = e.time;
    ++done;
    const std::size_t s = stream_of(e.op);
    busy[s] = 0;
    running[s] = -1;
    ++head[s];
    prev_on_stream[s] = e.op;
    if (now >= x.makespan) x.makespan = now, x.last_op = e.op;
    for (int k = off[std::size_t(e.op)]; k < off[std::size_t(e.op) + 1]; ++k) {
      const int t = succ[std::size_t(k)];
      if (now >= ready[std::size_t(t)]) ready[std::size_t(t)] = now, ready_by[std::size_t(t)] = e.op;
      if (--indeg[std::size_t(t)] == 0) try_stream(stream_of(t));
    }
    try_stream(s);
  }
  if (done != n)
    throw Error("work graph: " + std::to_string(n - done) + " of " + std::to_string(n) +
                " ops never started (dependency cycle or mismatched collective members)");
  return x;
}

}  // namespace infraplan::sim::train

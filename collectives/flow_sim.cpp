#include "collectives/flow_sim.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <set>
#include <simgrid/s4u.hpp>
#include <unordered_map>

#include "collectives/platform.hpp"
#include "common/error.hpp"

namespace sg4 = simgrid::s4u;

namespace infraplan::coll {

namespace {
struct WireFlow {
  int src = 0, dst = 0;
  double bytes = 0;
};
struct Barrier {
  double delay_s = 0;  // before the flows start
  std::vector<WireFlow> flows;
};
}  // namespace

struct FlowSim::Task {
  enum class Kind { Compute, Transfer, Collective } kind = Kind::Compute;
  std::vector<TaskId> deps;
  int gpu = -1;
  double seconds = 0;
  WireFlow flow;                  // transfer
  std::vector<Barrier> barriers;  // collective
};

FlowSim::FlowSim(const hw::Cluster& cluster, CommProfile profile, FlowSimOptions options)
    : model_(cluster, std::move(profile)), options_(options) {}

FlowSim::~FlowSim() = default;

std::size_t FlowSim::size() const { return tasks_.size(); }

TaskId FlowSim::add(Task t, const std::vector<TaskId>& deps,
                    const std::vector<std::pair<int, std::string>>& streams) {
  const TaskId id = TaskId(tasks_.size());
  std::set<TaskId> all;
  for (TaskId d : deps) {
    if (d < 0 || d >= id)
      throw Error("dependency " + std::to_string(d) + " is not an earlier task (0.." +
                  std::to_string(id - 1) + ")");
    all.insert(d);
  }
  for (const auto& s : streams) {
    auto it = stream_last_.find(s);
    if (it != stream_last_.end()) all.insert(it->second);
    stream_last_[s] = id;
  }
  t.deps.assign(all.begin(), all.end());
  tasks_.push_back(std::move(t));
  return id;
}

TaskId FlowSim::add_compute(int gpu, double seconds, const std::vector<TaskId>& deps,
                            const std::string& stream) {
  if (gpu < 0 || gpu >= model_.fabric().gpus())
    throw Error("compute gpu=" + std::to_string(gpu) + " is outside the cluster (0.." +
                std::to_string(model_.fabric().gpus() - 1) + ")");
  if (!(seconds >= 0)) throw Error("compute seconds must be >= 0");
  Task t;
  t.kind = Task::Kind::Compute;
  t.gpu = gpu;
  t.seconds = seconds;
  return add(std::move(t), deps, {{gpu, stream}});
}

TaskId FlowSim::add_transfer(int src, int dst, double bytes, const std::vector<TaskId>& deps,
                             const std::string& stream) {
  const int G = model_.fabric().gpus();
  if (src < 0 || src >= G || dst < 0 || dst >= G)
    throw Error("transfer src=" + std::to_string(src) + " dst=" + std::to_string(dst) + ": GPUs are 0.." +
                std::to_string(G - 1));
  if (!(bytes >= 0)) throw Error("transfer bytes must be >= 0");
  Task t;
  t.kind = Task::Kind::Transfer;
  const bool inter = model_.cluster().node_of(src) != model_.cluster().node_of(dst);
  const auto& p = model_.profile();
  t.flow = {src, dst, bytes / (inter ? p.inter_bw_efficiency : p.intra_bw_efficiency)};
  std::vector<std::pair<int, std::string>> streams{{src, stream}};
  if (dst != src) streams.push_back({dst, stream});
  return add(std::move(t), deps, streams);
}

TaskId FlowSim::add_collective(CollectiveOp op, double bytes, const std::vector<int>& ranks,
                               const std::vector<TaskId>& deps, const std::string& stream,
                               std::optional<Algorithm> algo, std::optional<Protocol> proto) {
  LoweredCollective l = model_.lower(op, bytes, ranks, algo, proto);
  Task t;
  t.kind = Task::Kind::Collective;
  const int budget = options_.max_barriers_per_collective;
  const std::size_t P = l.phases.size();
  double carry_delay = l.phases.empty() ? 0 : l.base_latency_s;
  for (std::size_t i = 0; i < P; ++i) {
    const Phase& ph = l.phases[i];
    if (ph.steps <= 0) continue;
    const PatternCost& cost = *l.costs[std::size_t(ph.pattern)];
    const auto& pat = l.plan.patterns[std::size_t(ph.pattern)];
    const double avg_step = l.phase_seconds(i, ph.steps) / double(ph.steps);
    long long groups = ph.steps;
    if (budget > 0) groups = std::min<long long>(ph.steps, std::max<long long>(1, budget / (long long)P));
    for (long long gi = 0; gi < groups; ++gi) {
      const long long s = ph.steps / groups + (gi < ph.steps % groups ? 1 : 0);
      Barrier b;
      const double unit = double(s) * ph.unit_bytes;
      b.delay_s =
          carry_delay + std::max(0.0, double(s) * avg_step - cost.step_seconds(unit, l.protocol_efficiency));
      carry_delay = 0;
      b.flows.reserve(pat.flows.size());
      for (const auto& f : pat.flows)
        b.flows.push_back({f.src, f.dst, unit * f.wire / l.protocol_efficiency});
      t.barriers.push_back(std::move(b));
    }
  }
  std::vector<std::pair<int, std::string>> streams;
  for (int r : ranks) streams.push_back({r, stream});
  return add(std::move(t), deps, streams);
}

namespace {

/// Executes the DAG inside one SimGrid engine, creating activities just in time.
class Runner {
 public:
  Runner(const std::vector<FlowSim::Task>& tasks, const net::SimPlatform& plat)
      : tasks_(tasks),
        plat_(plat),
        pending_(tasks.size()),
        succ_(tasks.size()),
        timing_(tasks.size()),
        barrier_(tasks.size(), 0),
        outstanding_(tasks.size(), 0) {
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      pending_[t] = int(tasks[t].deps.size());
      for (TaskId d : tasks[t].deps) succ_[std::size_t(d)].push_back(TaskId(t));
    }
  }

  void start() {
    sg4::Activity::on_completion_cb([this](const sg4::Activity& a) { completed(a); });
    for (std::size_t t = 0; t < tasks_.size(); ++t)
      if (pending_[t] == 0) start_task(TaskId(t));
  }
  const std::vector<TaskTiming>& timing() const { return timing_; }
  long long activities() const { return (long long)keep_.size(); }

 private:
  enum Tag { Body, Delay, Flow };

  void track(const sg4::ActivityPtr& a, TaskId t, Tag tag) {
    owner_[a.get()] = {t, tag};
    keep_.push_back(a);
  }
  void delay(TaskId t, double seconds, sg4::Host* h, Tag tag) {
    auto e = sg4::Exec::init()->set_flops_amount(seconds * net::kHostFlops)->set_host(h);
    track(e, t, tag);
    e->start();
  }
  void start_task(TaskId t) {
    const auto& task = tasks_[std::size_t(t)];
    timing_[std::size_t(t)].start_s = sg4::Engine::get_clock();
    switch (task.kind) {
      case FlowSim::Task::Kind::Compute:
        delay(t, task.seconds, plat_.gpus[std::size_t(task.gpu)], Body);
        break;
      case FlowSim::Task::Kind::Transfer:
        if (task.flow.src == task.flow.dst) {
          delay(t, 0, plat_.timer, Body);
        } else {
          auto c = sg4::Comm::sendto_init(plat_.gpus[std::size_t(task.flow.src)],
                                          plat_.gpus[std::size_t(task.flow.dst)])
                       ->set_payload_size(std::uint64_t(std::llround(task.flow.bytes)));
          track(c, t, Body);
          c->start();
        }
        break;
      case FlowSim::Task::Kind::Collective:
        start_barrier(t);
        break;
    }
  }
  void start_barrier(TaskId t) {
    const auto& task = tasks_[std::size_t(t)];
    const std::size_t b = barrier_[std::size_t(t)];
    if (b >= task.barriers.size()) return finish(t);
    if (task.barriers[b].delay_s > 0) return delay(t, task.barriers[b].delay_s, plat_.timer, Delay);
    launch_flows(t);
  }
  void launch_flows(TaskId t) {
    const auto& bar = tasks_[std::size_t(t)].barriers[barrier_[std::size_t(t)]];
    int n = 0;
    for (const auto& f : bar.flows) n += f.src != f.dst;
    outstanding_[std::size_t(t)] = n;
    if (n == 0) {
      ++barrier_[std::size_t(t)];
      return start_barrier(t);
    }
    for (const auto& f : bar.flows) {
      if (f.src == f.dst) continue;
      auto c = sg4::Comm::sendto_init(plat_.gpus[std::size_t(f.src)], plat_.gpus[std::size_t(f.dst)])
                   ->set_payload_size(std::uint64_t(std::llround(f.bytes)));
      track(c, t, Flow);
      c->start();
    }
  }
  void finish(TaskId t) {
    timing_[std::size_t(t)].end_s = sg4::Engine::get_clock();
    for (TaskId s : succ_[std::size_t(t)])
      if (--pending_[std::size_t(s)] == 0) start_task(s);
  }
  void completed(const sg4::Activity& a) {
    auto it = owner_.find(&a);
    if (it == owner_.end()) return;
    const auto [t, tag] = it->second;
    owner_.erase(it);
    switch (tag) {
      case Body:
        finish(t);
        break;
      case Delay:
        launch_flows(t);
        break;
      case Flow:
        if (--outstanding_[std::size_t(t)] == 0) {
          ++barrier_[std::size_t(t)];
          start_barrier(t);
        }
        break;
    }
  }

  const std::vector<FlowSim::Task>& tasks_;
  const net::SimPlatform& plat_;
  std::vector<int> pending_;
  std::vector<std::vector<TaskId>> succ_;
  std::vector<TaskTiming> timing_;
  std::vector<std::size_t> barrier_;
  std::vector<int> outstanding_;
  std::unordered_map<const sg4::Activity*, std::pair<TaskId, Tag>> owner_;
  std::vector<sg4::ActivityPtr> keep_;  // SimGrid 3.32 crashes if the last reference goes early
};

bool write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= std::size_t(w);
  }
  return true;
}

}  // namespace

SimResult FlowSim::run_here() const {
  std::set<std::pair<int, int>> pairs;
  for (const auto& t : tasks_) {
    if (t.kind == Task::Kind::Transfer) pairs.insert({t.flow.src, t.flow.dst});
    for (const auto& b : t.barriers)
      for (const auto& f : b.flows) pairs.insert({f.src, f.dst});
  }
  int argc = 2;
  char arg0[] = "infraplan";
  char arg1[] = "--log=root.thres:warning";
  char* argv[] = {arg0, arg1, nullptr};
  auto* engine = new sg4::Engine(&argc, argv);
  net::configure_engine(*engine);
  net::SimPlatform plat =
      net::build_platform(model_.fabric(), std::vector<std::pair<int, int>>(pairs.begin(), pairs.end()));
  const double t0 = sg4::Engine::get_clock();
  Runner runner(tasks_, plat);
  runner.start();
  engine->run();
  SimResult r;
  r.tasks = runner.timing();
  for (auto& t : r.tasks) {
    t.start_s -= t0;
    t.end_s -= t0;
    r.makespan_s = std::max(r.makespan_s, t.end_s);
  }
  r.activities = runner.activities();
  // The engine is left to the process: SimGrid 3.32 cannot start a clean second one anyway, and
  // in a forked child tearing it down only costs time.
  return r;
}

SimResult FlowSim::run() const {
  const auto w0 = std::chrono::steady_clock::now();
  auto wall = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count(); };
  if (!options_.fork) {
    SimResult r = run_here();
    r.wall_s = wall();
    return r;
  }
  int fds[2];
  if (::pipe(fds) != 0) throw Error("flow simulation: cannot create a pipe");
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error("flow simulation: fork failed");
  }
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    try {
      SimResult r = run_here();
      const double head[3] = {double(r.tasks.size()), r.makespan_s, double(r.activities)};
      if (!write_all(fds[1], head, sizeof head) ||
          !write_all(fds[1], r.tasks.data(), r.tasks.size() * sizeof(TaskTiming)))
        code = 3;
    } catch (const std::exception& e) {
      const std::string msg = std::string("flow simulation failed: ") + e.what() + "\n";
      write_all(2, msg.data(), msg.size());
      code = 2;
    }
    ::close(fds[1]);
    ::_exit(code);
  }
  ::close(fds[1]);
  std::vector<char> buf;
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.insert(buf.end(), chunk, chunk + n);
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || buf.size() < 3 * sizeof(double))
    throw Error("flow simulation: the simulating child process failed (status " + std::to_string(status) +
                ")");
  double head[3];
  std::memcpy(head, buf.data(), sizeof head);
  SimResult r;
  r.tasks.resize(std::size_t(head[0]));
  if (buf.size() != sizeof head + r.tasks.size() * sizeof(TaskTiming))
    throw Error("flow simulation: truncated results from the simulating child process");
  std::memcpy(r.tasks.data(), buf.data() + sizeof head, r.tasks.size() * sizeof(TaskTiming));
  r.makespan_s = head[1];
  r.activities = (long long)head[2];
  r.wall_s = wall();
  return r;
}

}  // namespace infraplan::coll

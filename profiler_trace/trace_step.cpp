#include "profiler_trace/trace_step.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

#include "common/error.hpp"

namespace infraplan::ptrace {

std::vector<const std::string*> TraceStep::ancestry(int i) const {
  std::vector<const std::string*> out;
  for (; i >= 0; i = ops[std::size_t(i)].parent) out.push_back(&ops[std::size_t(i)].ev->name);
  return out;
}

bool TraceStep::has_ancestor_prefix(int i, const std::string& prefix) const {
  for (; i >= 0; i = ops[std::size_t(i)].parent)
    if (ops[std::size_t(i)].ev->name.rfind(prefix, 0) == 0) return true;
  return false;
}

int TraceStep::nearest_named(int i, const std::vector<std::string>& names) const {
  for (; i >= 0; i = ops[std::size_t(i)].parent)
    if (std::find(names.begin(), names.end(), ops[std::size_t(i)].ev->name) != names.end()) return i;
  return -1;
}

namespace {

bool is_gpu(EventKind k) {
  return k == EventKind::Kernel || k == EventKind::Memcpy || k == EventKind::Memset;
}
bool is_cpu(EventKind k) { return k == EventKind::CpuOp || k == EventKind::UserAnnotation; }
bool is_step_name(const std::string& n) { return n.rfind("ProfilerStep#", 0) == 0; }

/// Place of an event on a track, to the nanosecond (flows share their endpoints' place).
using Place = std::tuple<std::int64_t, std::int64_t, std::int64_t>;
Place place_of(const TraceEvent& e) { return {e.pid, e.tid, std::llround(e.ts_us * 1000)}; }

/// Indexes of a trace for linking GPU work to its launch.
struct Links {
  std::unordered_map<std::int64_t, const TraceEvent*> runtime_by_corr;
  std::map<Place, const TraceEvent*> runtime_by_place;
  std::map<Place, std::int64_t> flow_end_by_place;
  std::unordered_map<std::int64_t, const TraceEvent*> flow_start_by_id;

  explicit Links(const KinetoTrace& t) {
    for (const auto& e : t.events) {
      if (e.kind == EventKind::Runtime) {
        if (e.correlation >= 0) runtime_by_corr.emplace(e.correlation, &e);
        runtime_by_place.emplace(place_of(e), &e);
      } else if (e.kind == EventKind::FlowEnd && e.flow_id >= 0) {
        flow_end_by_place.emplace(place_of(e), e.flow_id);
      } else if (e.kind == EventKind::FlowStart && e.flow_id >= 0) {
        flow_start_by_id.emplace(e.flow_id, &e);
      }
    }
  }
  /// The launch call of GPU work `g` (nullptr when the trace does not say).
  const TraceEvent* launch_of(const TraceEvent& g) const {
    if (g.correlation >= 0)
      if (auto it = runtime_by_corr.find(g.correlation); it != runtime_by_corr.end()) return it->second;
    auto f = flow_end_by_place.find(place_of(g));
    if (f == flow_end_by_place.end()) return nullptr;
    auto s = flow_start_by_id.find(f->second);
    if (s == flow_start_by_id.end()) return nullptr;
    auto r = runtime_by_place.find(place_of(*s->second));
    return r == runtime_by_place.end() ? nullptr : r->second;
  }
};

/// Call trees per host thread over `evs` (sorted by start, longest first): parent = the innermost
/// op still open on the same thread that contains the event.
std::vector<CpuOpNode> nest(const std::vector<const TraceEvent*>& evs) {
  std::vector<CpuOpNode> ops;
  ops.reserve(evs.size());
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<int>> open;  // per (pid, tid)
  constexpr double eps = 1e-3;                                             // µs: the JSON's resolution
  for (const TraceEvent* e : evs) {
    auto& stack = open[{e->pid, e->tid}];
    while (!stack.empty() && ops[std::size_t(stack.back())].ev->end_us() < e->end_us() - eps)
      stack.pop_back();
    CpuOpNode n;
    n.ev = e;
    n.parent = stack.empty() ? -1 : stack.back();
    stack.push_back(int(ops.size()));
    ops.push_back(n);
  }
  return ops;
}

/// The innermost CPU op of `ops` on the launch call's thread that encloses the call.
int enclosing_op(const std::vector<CpuOpNode>& ops, const TraceEvent& call) {
  int best = -1;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TraceEvent& e = *ops[i].ev;
    if (e.ts_us > call.ts_us) break;
    if (e.pid == call.pid && e.tid == call.tid && e.end_us() >= call.end_us()) best = int(i);
  }
  return best;
}

}  // namespace

TraceStep find_step(const KinetoTrace& t, std::optional<int> wanted) {
  Links links(t);
  std::vector<const TraceEvent*> steps;
  for (const auto& e : t.events)
    if (e.kind == EventKind::UserAnnotation && is_step_name(e.name)) steps.push_back(&e);

  // When each piece of GPU work was launched (host clock): its launch call, else the CPU op
  // with its External id.
  std::unordered_map<std::int64_t, const TraceEvent*> cpu_by_ext;
  for (const auto& e : t.events)
    if (is_cpu(e.kind) && e.external_id >= 0) cpu_by_ext.emplace(e.external_id, &e);
  struct Gpu {
    const TraceEvent* ev;
    const TraceEvent* launch;
    double launched_us;
  };
  std::vector<Gpu> gpu;
  for (const auto& e : t.events) {
    if (!is_gpu(e.kind)) continue;
    const TraceEvent* call = links.launch_of(e);
    double at = call ? call->ts_us : NAN;
    if (!call && e.external_id >= 0)
      if (auto it = cpu_by_ext.find(e.external_id); it != cpu_by_ext.end()) at = it->second->ts_us;
    gpu.push_back({&e, call, at});
  }

  TraceStep s;
  s.steps_in_trace = int(steps.size());
  const TraceEvent* chosen = nullptr;
  if (wanted) {
    const std::string name = "ProfilerStep#" + std::to_string(*wanted);
    for (const auto* st : steps)
      if (st->name == name) chosen = st;
    if (!chosen) {
      std::vector<std::string> have;
      for (const auto* st : steps) have.push_back(st->name);
      throw Error(
          "--step " + std::to_string(*wanted) + ": '" + t.origin + "' has no " + name +
          (have.empty() ? std::string(" (it has no ProfilerStep annotations)") : "; it has " + join(have)));
    }
  } else {
    for (auto it = steps.rbegin(); it != steps.rend() && !chosen; ++it) {
      const TraceEvent* st = *it;
      for (const auto& g : gpu)
        if (g.launched_us >= st->ts_us && g.launched_us <= st->end_us()) {
          chosen = st;
          break;
        }
    }
    if (!chosen && !steps.empty()) chosen = steps.back();
  }

  if (chosen) {
    s.name = chosen->name;
    s.cpu_begin_us = chosen->ts_us;
    s.cpu_end_us = chosen->end_us();
  } else {
    s.name = "whole trace";
    s.whole_trace = true;
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& e : t.events)
      if (is_cpu(e.kind) || is_gpu(e.kind)) lo = std::min(lo, e.ts_us), hi = std::max(hi, e.end_us());
    s.cpu_begin_us = std::isfinite(lo) ? lo : 0;
    s.cpu_end_us = std::isfinite(hi) ? hi : 0;
  }

  std::vector<const TraceEvent*> cpu;
  for (const auto& e : t.events)
    if (is_cpu(e.kind) && e.ts_us >= s.cpu_begin_us && e.ts_us <= s.cpu_end_us) cpu.push_back(&e);
  s.ops = nest(cpu);
  std::unordered_map<std::int64_t, int> op_by_ext;
  for (std::size_t i = 0; i < s.ops.size(); ++i)
    if (s.ops[i].ev->external_id >= 0) op_by_ext.emplace(s.ops[i].ev->external_id, int(i));

  for (const auto& g : gpu) {
    const bool inside = std::isfinite(g.launched_us)
                            ? g.launched_us >= s.cpu_begin_us && g.launched_us <= s.cpu_end_us
                            : s.whole_trace;
    if (!inside) continue;
    LaunchedWork w;
    w.gpu = g.ev;
    w.launch = g.launch;
    std::int64_t ext = g.ev->external_id >= 0 ? g.ev->external_id : g.launch ? g.launch->external_id : -1;
    if (auto it = op_by_ext.find(ext); ext >= 0 && it != op_by_ext.end())
      w.op = it->second;
    else if (g.launch)
      w.op = enclosing_op(s.ops, *g.launch);
    s.work.push_back(w);
  }
  std::stable_sort(s.work.begin(), s.work.end(),
                   [](const LaunchedWork& a, const LaunchedWork& b) { return a.gpu->ts_us < b.gpu->ts_us; });
  return s;
}

}  // namespace infraplan::ptrace

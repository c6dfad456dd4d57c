#pragma once
// One training step of a profiler trace: its CPU window (a ProfilerStep#N annotation, or the whole
// trace when there is none), the CPU ops inside it nested into call trees per host thread, and
// the GPU work it launched, each kernel / copy / set tied to the innermost CPU op that launched it:
// through the kernel's "External id" (the id of the CPU op active at the launch), else through
// its "correlation" with the launch call (cudaLaunchKernel, cuLaunchKernelEx) and the op around
// that call, else through the ac2g flow from the call to the kernel.
#include <optional>
#include <string>
#include <vector>

#include "profiler_trace/kineto_trace.hpp"

namespace infraplan::ptrace {

/// A CPU op or annotation of the step, in its thread's call tree.
struct CpuOpNode {
  const TraceEvent* ev = nullptr;
  int parent = -1;  ///< index of the enclosing op on the same thread, -1 at the top
};

/// A piece of GPU work of the step and what launched it.
struct LaunchedWork {
  const TraceEvent* gpu = nullptr;     ///< kernel, memcpy or memset
  const TraceEvent* launch = nullptr;  ///< the runtime / driver call that issued it (may be null)
  int op = -1;                         ///< innermost CPU op (index into TraceStep::ops), -1 if unknown
};

struct TraceStep {
  std::string name;                         ///< "ProfilerStep#7", or "whole trace"
  bool whole_trace = false;                 ///< no ProfilerStep annotation: every event counts
  double cpu_begin_us = 0, cpu_end_us = 0;  ///< the host's step window
  std::vector<CpuOpNode> ops;               ///< CPU ops and annotations inside the window
  std::vector<LaunchedWork> work;           ///< GPU work launched in the window, by GPU start time
  int steps_in_trace = 0;                   ///< ProfilerStep annotations the trace holds

  double wall_seconds() const { return (cpu_end_us - cpu_begin_us) * 1e-6; }
  /// Chain of op names from the innermost op `i` outwards.
  std::vector<const std::string*> ancestry(int i) const;
  /// True when op `i` or one of its ancestors is named `name` exactly or starts with `prefix`.
  bool has_ancestor_prefix(int i, const std::string& prefix) const;
  /// The nearest op (i or an ancestor) whose name equals one of `names`; -1 if none.
  int nearest_named(int i, const std::vector<std::string>& names) const;
};

/// The step to calibrate from: `wanted` = N selects ProfilerStep#N; without it, the last step
/// annotation that launched GPU work; the whole trace when the trace has no step annotations.
/// Throws infraplan::Error when ProfilerStep#N is not in the trace (listing those that are).
TraceStep find_step(const KinetoTrace& t, std::optional<int> wanted = std::nullopt);

}  // namespace infraplan::ptrace

#pragma once
// Where a traced training step spent its time: GPU time and kernel count per category, GPU busy
// time (the union of the GPU work's intervals) against the step's wall time, the GPU idle time
// spent waiting on the host (the next kernel's launch call came after the GPU had gone idle), and
// the framework the kernels come from. Printed by `infraplan calibrate --from-trace` and stored in
// the profile's provenance.
#include <array>
#include <string>
#include <vector>

#include "common/json_util.hpp"
#include "profiler_trace/kernel_classify.hpp"

namespace infraplan::ptrace {

struct CategoryTotals {
  int kernels = 0;
  double seconds = 0;  ///< summed kernel durations
};

struct StepSummary {
  std::string trace;  ///< file it came from
  std::string step;   ///< "ProfilerStep#7" or "whole trace"
  int steps_in_trace = 0;
  std::string framework;          ///< detected: "pytorch-eager", "transformers" or "torch-compile"
  double wall_seconds = 0;        ///< the host's step window
  double gpu_span_seconds = 0;    ///< first GPU work start to last GPU work end
  double gpu_busy_seconds = 0;    ///< union of the GPU work intervals (all streams)
  double gpu_kernel_seconds = 0;  ///< summed durations (> busy when streams overlap)
  double host_wait_seconds = 0;   ///< GPU idle gaps ended by work the host launched only after the gap began
  double idle_other_seconds = 0;  ///< the other idle gaps inside the span (dependencies, syncs)
  int kernels = 0;                ///< pieces of GPU work (kernels, copies, sets)
  int triton_kernels = 0;
  int unlinked = 0;  ///< GPU work whose launching CPU op the trace does not name
  std::array<CategoryTotals, kKernelCategories> by_category{};
  std::array<double, 4> seconds_by_phase{};  ///< forward, backward, recompute, optimizer
};

/// Sums up a classified step.
StepSummary summarize(const TraceStep& step, const std::vector<ClassifiedWork>& work,
                      const std::string& trace);

/// "torch-compile" when Triton kernels carry a real share of the step's GPU time (Inductor);
/// "transformers" when the norms are Hugging Face transformers' RMSNorm module (its ATen ops);
/// else "pytorch-eager".
std::string detect_framework(const std::vector<ClassifiedWork>& work);

/// The summary as JSON (seconds, counts, shares) for --json and the profile's provenance.
Json summary_json(const StepSummary& s);

}  // namespace infraplan::ptrace

#pragma once
// The framework's eager-kernel table (profile "framework.elementwise": kernel type → element
// counts → seconds, read by hw::eager_op_seconds) as a traced step measured it, merged into a base
// profile's table.
//
// One call of a kernel type is the GPU time of all kernels one op instance launched (a
// decomposed aten::rms_norm's pow, mean, rsqrt and mul kernels make one rms_norm call; the
// composites of profiler_trace/composites.hpp — RoPE, SwiGLU, GQA expansion, transformers'
// RMSNorm — one call each); calls of one type at one element count are summarised by their median. Merging
// with the base table:
// - at the traced element counts, the traced medians;
// - between the smallest and the largest traced count, nothing else (interpolation runs between
//   the traced points);
// - outside that range, for a type the base table has: the base curve scaled to the traced time
//   at the nearest traced count (the base's measured shape, this machine's level);
// - for a type the base lacks: the profile's memory-bound curve (launch floor included) over an
//   effective traffic β · elements, β chosen so that it reproduces the nearest traced call.
// Types the trace did not see keep their base rows.
#include <map>
#include <string>
#include <vector>

#include "hardware/cost_model.hpp"
#include "hardware/profile.hpp"
#include "common/json_util.hpp"
#include "profiler_trace/kernel_classify.hpp"

namespace infraplan::ptrace {

/// Calls of one kernel type at one element count.
struct EagerPoint {
  double elements = 0;
  std::vector<double> seconds;  ///< one per call
  double median() const;
};

/// Kernel type → its points (ascending elements).
using EagerCalls = std::map<std::string, std::vector<EagerPoint>>;

/// Collects the calls of every kernel type (unit types and composite types) outside the
/// optimizer; GEMM, attention and communication work is not part of the table.
EagerCalls eager_calls(const TraceStep& step, const std::vector<ClassifiedWork>& work);

/// The merged "framework.elementwise" section: {"elements": [...], "ops": {type: {"seconds": [...],
/// "source": ..., "traced": [...]}}}. `base` is the base profile (its table), `cost` its cost model
/// (the memory-bound curve), `base_section` the base JSON section (may be null).
Json merge_eager_table(const hw::Profile& base, const hw::CostModel& cost, const Json& base_section,
                       const EagerCalls& calls);

}  // namespace infraplan::ptrace

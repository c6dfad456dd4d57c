#pragma once
// `infraplan calibrate --from-trace`: a hardware profile whose framework costs come from a
// profiler trace of the user's own training step. The GPU's embedded profile (or --base) is the
// base; the trace overlays what it measured:
// - framework.name: the framework the kernels came from (pytorch-eager, torch-compile), or --framework;
// - framework.elementwise: the eager-kernel table (profiler_trace/eager_table.hpp);
// - tables.gemm_shapes: every traced GEMM shape (median per shape, its layout), answered exactly;
// - tables.gemm_rows: for each traced forward / input-gradient weight (n, k), the base tables along
//   m scaled by the traced time at the traced m (other micro-batches and sequence lengths);
// - tables.attention_points: the traced attention calls, forward and backward seconds;
// - framework.optimizer_gpu: the optimizer step's GPU time per parameter and per tensor;
// - "trace_calibration": provenance (trace, step, GPU, the step summary, the command, and the host
//   time per forward op and backward node as the trace saw it — recorded, not used: the profiler
//   slows the host, so the base's host costs stay).
// Nothing is written unless the whole profile parses back.
#include <optional>
#include <string>

#include "common/json_util.hpp"
#include "profiler_trace/step_summary.hpp"

namespace infraplan::ptrace {

struct TraceCalibrationOptions {
  std::string trace_path;
  std::string gpu;           ///< catalog name; "" = from the trace's deviceProperties
  std::string framework;     ///< strat::framework_names(); "" = detected from the kernels
  std::optional<int> step;   ///< ProfilerStep#N; default: the last step with GPU work
  std::string base_profile;  ///< base profile file; "" = the GPU's embedded profile
  std::string command;       ///< echoed in the provenance
};

/// A traced GEMM shape: PyTorch's out[m, n] = A[m, k] · B[k, n] with its cuBLAS layout.
struct TracedGemm {
  std::string dtype, layout;
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  std::vector<double> seconds;  ///< one per call (all kernels of the call)
  double median() const;
};

/// A traced attention shape with its forward and backward calls.
struct TracedAttention {
  AttentionCall shape;  ///< backward = false
  std::vector<double> forward_seconds, backward_seconds;
};

struct TraceCalibration {
  std::string gpu;        ///< catalog GPU of the profile
  std::string framework;  ///< stored framework name
  StepSummary summary;
  std::vector<TracedGemm> gemms;
  std::vector<TracedAttention> attention;
  std::size_t eager_types = 0;   ///< kernel types in the merged eager table taken from the trace
  double optimizer_seconds = 0;  ///< GPU seconds of the optimizer step
  double optimizer_params = 0, optimizer_tensors = 0;
  Json profile;  ///< the profile to write
};

/// Reads, classifies and overlays; throws infraplan::Error for every refusal (unreadable or
/// malformed trace, another GPU than --gpu, no GPU work, no backward pass, no recorded shapes).
TraceCalibration calibrate_from_trace(const TraceCalibrationOptions& o);

}  // namespace infraplan::ptrace

#pragma once
// Which catalog GPU a profiler trace ran on, from the deviceProperties torch.profiler records
// (name, compute capability, SM count, memory), checked against the GPU the user names.
#include <string>

#include "profiler_trace/trace_step.hpp"

namespace infraplan::ptrace {

/// The catalog name of the GPU that ran the step's kernels. `wanted` (a catalog name, may be
/// empty) must agree with the trace when the trace describes its GPU, and is required when it
/// does not. Throws infraplan::Error (the trace's GPU and the one asked for, or what is missing).
std::string trace_gpu(const KinetoTrace& t, const TraceStep& step, const std::string& wanted);

/// One line describing a device: "NVIDIA H200 (sm_90, 132 SMs, 140.4 GiB)".
std::string describe_device(const DeviceProperties& d);

}  // namespace infraplan::ptrace

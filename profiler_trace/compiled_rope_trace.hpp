#pragma once
// Inductor's rotary-position kernels in a traced torch.compile step. Inductor fuses the rotary
// tables into the rotation and recomputes the angles (arange, pow, reciprocal, cos/sin) for every
// element it writes; their fused kernel names say so. The per-layer GPU time of those kernels, with
// the element counts the profile's rows `compiled_rope_{amp,pure}_{fwd,bwd}` are indexed by
// (strategies/compiled_ops.cpp, bench/pytorch/compiled_rope.py), lets `--from-trace` carry this
// machine's speed on them into the profile.
#include <optional>
#include <vector>

#include "profiler_trace/kernel_classify.hpp"

namespace infraplan::ptrace {

struct TracedCompiledRope {
  int layers = 0;               ///< forward attention calls of the step
  double forward_seconds = 0;   ///< per layer: the rotary kernels of the forward (and recompute)
  double backward_seconds = 0;  ///< per layer: those of the backward
  /// Elements the forward writes, q and k as SDPA takes them: tokens × head width × (query heads +
  /// the K heads SDPA receives).
  double forward_elements = 0;
  /// Elements rotated back in the backward: tokens × head width × (query + KV heads); 0 when the
  /// trace does not show the KV heads (no forward projection narrower than the query heads' width).
  double rotated_elements = 0;
};

/// True for a Triton kernel that recomputes rotary angles (its fused name holds arange, reciprocal
/// and cos or sin).
bool is_compiled_rope_kernel(const ClassifiedWork& w);

/// The step's compiled rotary kernels per layer; nullopt without Triton rotary kernels or without a
/// forward attention call.
std::optional<TracedCompiledRope> traced_compiled_rope(const std::vector<ClassifiedWork>& work);

}  // namespace infraplan::ptrace

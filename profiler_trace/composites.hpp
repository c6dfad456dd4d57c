#pragma once
// Framework-level kernels that eager PyTorch runs as several ATen ops, recognised in a traced step
// so that the framework table holds them under the names the training op lists price them by
// (bench/pytorch/calibrate_framework.py defines each one):
//   rope_amp_fwd / rope_<dt>_fwd   q*cos + rotate_half(q)*sin: mul, neg, cat, mul, add
//                                  (amp: bf16 q times fp32 cos/sin); elements = q's
//   swiglu_<dt>_fwd                silu(gate) * up: a silu, later the mul of its output; elements = gate's
//   gqa_expand_<dt>                K/V heads repeated for GQA: the copy of an expanded (stride-0)
//                                  5-D view; elements = the output's
//   transpose_copy_<dt>            contiguous copy of a transposed 4-D [b, heads, s, d] tensor
//   rms_norm_hf_<dt>_fwd           transformers' RMSNorm: (to fp32,) pow, mean, add, rsqrt, mul,
//                                  (to dt,) mul; elements = the input's
// and their backward ("_bwd"; gqa_expand_<dt>_bwd): every kernel the autograd nodes of the
// instance's forward ops ran, tied by sequence number. Forward instances are matched on the
// outermost ATen ops of each host thread, in launch order; activation-checkpointing recomputes
// count as forward calls.
#include <string>
#include <vector>

#include "profiler_trace/kernel_classify.hpp"

namespace infraplan::ptrace {

/// One call of a recognised composite.
struct CompositeCall {
  std::string type;     ///< e.g. "rope_amp_fwd", "swiglu_bf16_bwd"
  double elements = 0;  ///< the type's element convention
  double seconds = 0;   ///< GPU seconds of all its kernels
};

/// Every composite call of the step (forward and backward). With `labels`, also the composite type
/// each piece of work belongs to (same order as `work`; "" when none).
std::vector<CompositeCall> composite_calls(const TraceStep& step, const std::vector<ClassifiedWork>& work,
                                           std::vector<std::string>* labels = nullptr);

}  // namespace infraplan::ptrace

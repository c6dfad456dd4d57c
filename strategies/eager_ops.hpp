#pragma once
// Op lists of a dense transformer layer (and the embedding and LM head) in eager PyTorch:
// frameworks pytorch-eager and transformers (framework.hpp), precisions amp-bf16 (autocast: fp32
// residual stream, norms and loss; bf16 casts before every GEMM) and bf16-pure (everything bf16).
// Every kernel a step launches around the GEMMs and the attention is an op, priced from the
// profile's measured eager-kernel table (framework.elementwise: GPU seconds by element count, as
// bench/pytorch/calibrate_framework.py times them; memory-bound over the bytes moved where the
// table lacks the kernel). Which kernels run was read off profiler traces of such steps
// (docs/training.md "Frameworks"):
//   - separate Q, K, V (and gate, up) projections for rotary models (LLaMA, Qwen2, Mistral in
//     transformers and torch-native code), one fused QKV projection for learned-position models
//     (GPT-2); under autocast each projection casts its fp32 input again, and in backward each
//     input gradient is cast back to fp32 and accumulated;
//   - rotary positions applied elementwise to q and k (mul, neg, cat, mul, add), in fp32 under
//     autocast (bf16 q times fp32 cos/sin) and cast to bf16 by SDPA;
//   - grouped-query attention: pytorch-eager repeats K/V heads before SDPA (a copy of the
//     expanded K and V, summed back in backward); transformers passes them to SDPA (enable_gqa);
//   - RMSNorm: pytorch-eager's F.rms_norm is one fused kernel each way; transformers' RMSNorm is
//     a chain of fp32 elementwise kernels;
//   - the logits are upcast to fp32 for the loss (log-softmax over T × vocab in fp32).
#include <cstdint>

#include "strategies/op_builder.hpp"

namespace infraplan::strat {

/// True when `c` prices layer `layer` with the eager op lists (an eager framework, dense layer).
bool uses_eager_ops(const OpContext& c, std::int64_t layer);

void eager_layer_forward(Builder& b, const OpContext& c, std::int64_t layer, OpCategory cat);
/// Starts with the recompute ops the config asks for (full: the layer forward again).
void eager_layer_backward(Builder& b, const OpContext& c, std::int64_t layer);
void eager_embedding_forward(Builder& b, const OpContext& c);
void eager_embedding_backward(Builder& b, const OpContext& c);
void eager_head_forward(Builder& b, const OpContext& c);
void eager_head_backward(Builder& b, const OpContext& c);

}  // namespace infraplan::strat

#pragma once
// Op lists of a dense transformer layer (and the LM head) under torch.compile (framework
// torch-compile): the GEMMs and attention of the eager model, with Inductor's fused elementwise
// kernels between them, each priced as one memory-bound kernel over the bytes it must move
// (inputs read once, outputs written once; the profile's memory-bound table). Which kernels
// Inductor emits was read off a profiler trace of such a step (docs/training.md "Frameworks"):
//   forward: per weight a cast (autocast), residual add + RMSNorm + cast to bf16 (twice),
//   RoPE of q and k with the casts and K/V repeats SDPA needs, SiLU·mul;
//   backward: SiLU·mul backward, RMSNorm backward + residual add + casts (twice), RoPE
//   backward with the sums over repeated K/V heads, per weight a gradient cast (autocast).
// The projections stay separate GEMMs as in the eager model.
#include <cstdint>
#include <string>

#include "strategies/op_builder.hpp"

namespace infraplan::strat {

/// The profile row (framework.elementwise) that prices Inductor's rotary kernels:
/// "compiled_rope_{amp,pure}_{fwd,bwd}" (bench/pytorch/compiled_rope.py).
std::string compiled_rope_row(bool amp, bool backward);

/// True when `c` prices layer `layer` with the torch-compile op lists (dense layer).
bool uses_compiled_ops(const OpContext& c, std::int64_t layer);

void compiled_layer_forward(Builder& b, const OpContext& c, std::int64_t layer, OpCategory cat);
/// Starts with the recompute ops the config asks for (full: the layer forward again).
void compiled_layer_backward(Builder& b, const OpContext& c, std::int64_t layer);
void compiled_head_forward(Builder& b, const OpContext& c);
void compiled_head_backward(Builder& b, const OpContext& c);

}  // namespace infraplan::strat

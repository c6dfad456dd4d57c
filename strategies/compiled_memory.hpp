#pragma once
// Activation bytes a torch.compile (Inductor) step keeps for backward, per layer and micro-batch,
// for the architecture whose saved tensors were listed (bench/pytorch/saved_activations.py,
// docs/data/h200_saved_activations.json: RMSNorm, rotary positions, SwiGLU, dense layers, flash
// attention). Inductor's partition keeps, per token, with h the width, q the query width, f the
// FFN width on this rank:
//   the residual stream twice (the block input and the mid-block sum: fp32 under autocast, 16-bit
//   in pure bf16) and the two normed 16-bit tensors the projections read; SDPA's rotated q, k and
//   v (k and v repeated to the query heads, as the module hands them to SDPA) and its output; the
//   gate, the up projection and the SiLU·mul product (f wide each); one fp32 reciprocal RMS per
//   norm and one fp32 log-sum-exp per query head.
// Under autocast the 16-bit weight casts are kept as well (the ledger's weight_copies line).
// With full recompute only the layer input is kept.
#include <cstdint>

#include "model/model_spec.hpp"
#include "strategies/training_config.hpp"

namespace infraplan::strat {

/// True when `t` runs under torch-compile and `layer` is a dense RMSNorm / rotary / SwiGLU layer
/// with flash attention (the ledger then uses compiled_activation_bytes_per_layer).
bool uses_compiled_activations(const model::ModelSpec& m, const TrainingConfig& t, std::int64_t layer);

/// Bytes one layer keeps per micro-batch (`recompute` as configured, or None for the working set
/// of one layer rebuilt during backward).
double compiled_activation_bytes_per_layer(const model::ModelSpec& m, const TrainingConfig& t,
                                           model::Recompute recompute);

}  // namespace infraplan::strat

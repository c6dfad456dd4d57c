#pragma once
// Activation bytes an eager PyTorch step keeps for backward, per layer and micro-batch: what
// autograd saves for the kernels of eager_ops.hpp (framework pytorch-eager or transformers,
// dense layers, flash attention). Per token, with h the width, q / kv the query / key-value widths
// and f the FFN width on this rank:
//   norm inputs (fp32 under autocast: the residual stream), the bf16 inputs each projection saves
//   (under autocast every projection casts and keeps its own copy: 3 for Q, K, V and 2 for gate,
//   up; one shared bf16 tensor without autocast), SDPA's q, k, v and output (k and v at the
//   query width when pytorch-eager repeats KV heads), and SwiGLU's gate, up, SiLU and product
//   (GELU: its input and output); transformers' RMSNorm keeps one fp32 tensor per norm.
// With full recompute only the layer input is kept; with op-level selective checkpointing
// (`selective-op`) the layer input, every other matmul output and SDPA's output.
#include <cstdint>

#include "model/model_spec.hpp"
#include "strategies/training_config.hpp"

namespace infraplan::strat {

/// True when `t` runs an eager framework and `layer` is a dense layer (the ledger then uses
/// eager_activation_bytes_per_layer instead of the Megatron formula).
bool uses_eager_activations(const model::ModelSpec& m, const TrainingConfig& t, std::int64_t layer);

/// Bytes one layer keeps per micro-batch (`recompute` as configured, or None for the working set
/// of one layer rebuilt during backward).
double eager_activation_bytes_per_layer(const model::ModelSpec& m, const TrainingConfig& t,
                                        model::Recompute recompute);

}  // namespace infraplan::strat

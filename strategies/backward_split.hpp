#pragma once
// Splitting a backward pass into its input-gradient part (B) and its weight-gradient part (W),
// as zero-bubble schedules run them (Qi et al., "Zero Bubble Pipeline Parallelism", 2023): B
// carries the gradient to the previous stage and stays on the critical path; W only produces
// this stage's parameter gradients and can run later.
//
// W takes the weight-gradient GEMMs ("*_wgrad"), bias gradients, the casts of weight gradients
// and the embedding's gradient accumulation; GEMMs priced as input and weight gradient together
// (2× a forward GEMM: "mlp_down_bwd", "attn_proj_bwd", the expert, shared-expert and router
// backward GEMMs) give half their time and FLOPs to each. Everything else (recompute, attention
// backward, norms, input-gradient GEMMs, communication) stays in B. For a dense layer the W FLOPs
// equal the forward GEMM FLOPs (2·tokens·weights), which backward_split_test checks.
#include <vector>

#include "strategies/training_ops.hpp"

namespace infraplan::strat {

struct SplitBackward {
  std::vector<OpTemplate> input;   ///< B: dependencies re-indexed, all explicit
  std::vector<OpTemplate> weight;  ///< W: compute ops in their original order, one chain
};

/// Splits a backward template (layer_backward_ops, head_backward_ops, embedding_backward_ops).
SplitBackward split_backward(const std::vector<OpTemplate>& backward);

/// Share of an op's time that belongs to W: 1, 0.5 (combined GEMM) or 0.
double weight_gradient_share(const OpTemplate& op);

}  // namespace infraplan::strat

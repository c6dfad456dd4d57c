#pragma once
// Arithmetic on a ModelSpec: parameter counts by component, FLOPs per token, KV-cache bytes per
// token and activation bytes per layer (Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models", generalised to GQA, SwiGLU and FlashAttention).
#include <cstdint>
#include <string>
#include <vector>

#include "common/dtype.hpp"
#include "model/model_spec.hpp"

namespace infraplan::model {

/// Parameters by component (counts, not bytes).
struct ParamBreakdown {
  double embedding = 0;  ///< token (and learned position) embeddings
  double attention = 0;  ///< Q, K, V, O projections (MLA down/up projections), their biases
  double mlp = 0;        ///< dense FFNs, routed experts, shared experts and routers
  double norm = 0;       ///< norm weights (and biases for LayerNorm), final norm included
  double lm_head = 0;    ///< output projection; 0 when tied to the embedding
  double total = 0;
  double active_per_token = 0;  ///< parameters one token touches (MoE: top-k + shared experts)
  double expert = 0;            ///< routed-expert parameters (subset of mlp), shardable by EP
};

ParamBreakdown count_params(const ModelSpec& m);

/// Per-layer parameter counts, for pipeline stage splits.
double attention_params_per_layer(const ModelSpec& m);
/// FFN parameters of layer `layer` (0-based): dense, or routed experts + shared + router.
double mlp_params_of_layer(const ModelSpec& m, std::int64_t layer);
double norm_params_per_layer(const ModelSpec& m);

/// Forward FLOPs per token at sequence length `seq`: 2 × active matmul parameters (LM head
/// included, embedding lookup excluded) + the attention score/value term 2·a·(d_qk + d_v)·ctx per
/// layer, with ctx = (seq + 1) / 2 when causal (mean over positions) or seq otherwise.
double forward_flops_per_token(const ModelSpec& m, std::int64_t seq, bool causal = true);
/// Matmul-only part of the forward FLOPs per token (2 × active non-embedding parameters).
double dense_forward_flops_per_token(const ModelSpec& m);
/// Training FLOPs per token: forward + backward (2× forward) = 3 × forward. Full recompute adds
/// one more forward (hardware FLOPs, not model FLOPs).
double training_flops_per_token(const ModelSpec& m, std::int64_t seq, bool causal = true);

/// KV-cache bytes per token over all layers: 2 · layers · kv_heads · head_dim · bytes for
/// MHA/GQA/MQA; layers · (kv_lora_rank + qk_rope_head_dim) · bytes for MLA (latent cache).
double kv_bytes_per_token(const ModelSpec& m, Dtype kv_dtype);

/// Activation recomputation: none; Megatron's selective (the attention core); PyTorch's op-level
/// selective checkpointing as torchtitan runs it (`selective-op`: every block's matmul outputs saved
/// but every second one, and attention's output; the rest recomputed in backward); full (only each
/// layer's input kept).
enum class Recompute { None, Selective, SelectiveOp, Full };
const char* recompute_name(Recompute r);
std::vector<std::string> recompute_names();  ///< every value recompute_name gives, in enum order
/// Whether every block runs under a checkpoint wrapper that re-runs its forward in backward (full
/// and op-level selective checkpointing; Megatron's selective recomputes the attention core only).
inline bool checkpoints_blocks(Recompute r) { return r == Recompute::Full || r == Recompute::SelectiveOp; }
Recompute parse_recompute(const std::string& s, const std::string& field);

/// How activations are stored during training.
struct ActivationOptions {
  std::int64_t tp = 1;  ///< tensor-parallel size t
  bool sp = false;      ///< sequence parallelism (shards norms/dropout by t)
  std::int64_t cp = 1;  ///< context parallelism (shards the sequence)
  Recompute recompute = Recompute::None;
  bool flash_attention = true;  ///< no s² score matrix stored (FlashAttention)
  bool dropout = false;         ///< dropout masks stored (1 byte per element)
  double act_bytes = 2;         ///< bytes per activation element (2 for 16-bit)
};

/// Activation bytes one transformer layer keeps for backward for one micro-batch of
/// `micro_batch` sequences of `seq` tokens. With GPT-3 shapes, MHA, dropout, no FlashAttention
/// this is exactly s·b·h·(34 + 5·a·s/h) (t = 1), s·b·h·(10 + 24/t + 5·a·s/(h·t)) under TP, and
/// s·b·h/t·(34 + 5·a·s/h) with SP.
double activation_bytes_per_layer(const ModelSpec& m, std::int64_t seq, std::int64_t micro_batch,
                                  const ActivationOptions& o, std::int64_t layer = -1);

}  // namespace infraplan::model

#pragma once
// ModelSpec: the shape of a decoder-only transformer, from a preset, inline JSON or a Hugging Face
// config.json. Arithmetic on it (parameters, FLOPs, KV bytes, activations) is in model_math.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include "common/json_util.hpp"

namespace infraplan::model {

/// The MLP: SwiGLU is gated (three matrices: gate, up, down); GELU and ReLU are plain (two).
enum class FfnType { SwiGLU, GELU, ReLU };
enum class NormType { RMSNorm, LayerNorm };
enum class PositionType { Rope, Learned };

/// Mixture of experts. `experts == 0` means a dense model.
struct MoeSpec {
  std::int64_t experts = 0;            ///< routed experts per MoE layer
  std::int64_t top_k = 0;              ///< routed experts each token visits
  std::int64_t expert_ffn_hidden = 0;  ///< intermediate size of one expert
  std::int64_t shared_experts = 0;     ///< always-active experts (DeepSeek), each expert_ffn_hidden wide
  std::int64_t dense_layers = 0;       ///< leading layers with a dense FFN of ffn_hidden
  bool enabled() const { return experts > 0; }
};

/// Multi-head latent attention (DeepSeek-V2/V3). `kv_lora_rank == 0` means plain MHA/GQA/MQA.
struct MlaSpec {
  std::int64_t q_lora_rank = 0;  ///< 0: queries projected directly from hidden
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  bool enabled() const { return kv_lora_rank > 0; }
};

struct ModelSpec {
  std::string name;
  std::int64_t hidden = 0;      ///< model width h
  std::int64_t layers = 0;      ///< transformer blocks L
  std::int64_t heads = 0;       ///< query heads a
  std::int64_t kv_heads = 0;    ///< key/value heads (== heads: MHA, 1: MQA, else GQA)
  std::int64_t head_dim = 0;    ///< per-head width (defaults to hidden / heads)
  std::int64_t ffn_hidden = 0;  ///< dense FFN intermediate size
  FfnType ffn_type = FfnType::SwiGLU;
  NormType norm = NormType::RMSNorm;
  PositionType position = PositionType::Rope;
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  bool qkv_bias = false;     ///< biases on Q, K, V projections (Qwen2)
  bool linear_bias = false;  ///< biases on every linear layer (GPT-2/3)
  std::int64_t max_seq = 4096;
  MoeSpec moe;
  MlaSpec mla;

  /// Checks every field against its range (common/limits.hpp); throws infraplan::Error naming
  /// the field, the value and the range.
  void validate() const;
  /// Width of all query heads (heads × head_dim, or heads × (nope+rope) under MLA).
  std::int64_t q_dim() const;
  /// Width of all key heads per token before any latent compression.
  std::int64_t kv_dim() const;
  /// Number of layers whose FFN is MoE.
  std::int64_t moe_layers() const { return moe.enabled() ? layers - moe.dense_layers : 0; }
  /// Serializes to the inline JSON form (round-trips through model_from_json).
  Json to_json() const;
};

/// Preset names, sorted.
std::vector<std::string> preset_names();
/// A preset by name; throws infraplan::Error with suggestions when unknown.
ModelSpec preset(const std::string& name);

/// Inline JSON (infraplan keys) or a Hugging Face config.json object (detected by its keys).
ModelSpec model_from_json(const Json& j, const std::string& path = "model");
/// Hugging Face config.json object.
ModelSpec model_from_hf_config(const Json& j, const std::string& origin);

/// Resolves a scenario's `model` value: a preset name, a path to a JSON file (infraplan or HF
/// config.json), an inline object, or {"preset": NAME, ...overrides}.
ModelSpec resolve_model(const Json& v, const std::string& path = "model");
/// Resolves a command-line argument: a preset name or a file path.
ModelSpec resolve_model_arg(const std::string& arg);

const char* ffn_type_name(FfnType t);

}  // namespace infraplan::model

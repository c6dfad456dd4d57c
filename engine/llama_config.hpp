#pragma once
// LlamaConfig: the shape of the decoder the CUDA engine runs — a LLaMA-architecture model
// (RMSNorm, rotary embeddings, GQA attention, SwiGLU FFN, no biases), from a ModelSpec (random
// weights) or a Hugging Face config.json (weights from safetensors). CUDA-free.
#include <cstdint>
#include <string>
#include <vector>

#include "common/json_util.hpp"
#include "model/model_spec.hpp"

namespace infraplan::engine {

struct LlamaConfig {
  std::string name;
  int layers = 0;
  int hidden = 0;                ///< model width h
  int heads = 0;                 ///< query heads
  int kv_heads = 0;              ///< key/value heads (heads / kv_heads ∈ {1, 2, 4, 8})
  int head_dim = 128;            ///< per-head width (the decode kernel needs 128)
  int ffn = 0;                   ///< SwiGLU intermediate size
  int vocab = 0;                 ///< vocabulary size
  int max_seq = 4096;            ///< longest sequence the engine admits, tokens
  float rms_eps = 1e-5f;         ///< RMSNorm epsilon
  float rope_theta = 1e4f;       ///< rotary base
  bool tied_embeddings = false;  ///< LM head shares the embedding matrix

  int q_dim() const { return heads * head_dim; }
  int kv_dim() const { return kv_heads * head_dim; }
  /// Columns of the fused QKV projection: q_dim + 2 · kv_dim.
  int qkv_dim() const { return q_dim() + 2 * kv_dim(); }
  /// Parameters (embedding, layers, final norm, LM head unless tied).
  std::int64_t params() const;
  /// bf16 KV bytes of one token over all layers.
  std::int64_t kv_bytes_per_token() const { return std::int64_t(layers) * 2 * kv_dim() * 2; }
  /// Throws infraplan::Error naming the field when the engine cannot run this shape.
  void validate() const;
  Json to_json() const;
};

/// Rotary angles of every position: [max_seq][head_dim / 2] pairs (cos, sin) of
/// pos · theta^(−2j / head_dim), computed in double and stored as float; the GPU model and the
/// host reference read the same table.
std::vector<float> rope_table(const LlamaConfig& c);

/// From a model spec (presets: llama2-7b, llama3-8b, ...). Refuses what the engine does not
/// run (MoE, MLA, GELU, LayerNorm, learned positions, biases), naming the field.
LlamaConfig llama_config_from_spec(const model::ModelSpec& m, float rope_theta = 1e4f, float rms_eps = 1e-5f);
/// From a Hugging Face config.json object (model_type llama/mistral-like); `origin` names the
/// file in errors. Refuses rope_scaling (not implemented).
LlamaConfig llama_config_from_hf(const Json& j, const std::string& origin);

}  // namespace infraplan::engine

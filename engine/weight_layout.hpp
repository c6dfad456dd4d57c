#pragma once
// WeightLayout: where each tensor of a LLaMA decoder lives in one contiguous bf16 buffer, in
// the layout the CUDA engine computes with (row-major [out][in], as Y = X · Wᵀ wants): per layer
// the attention norm, the fused QKV projection (q rows, then k rows, then v rows), the output
// projection, the FFN norm, the fused gate/up projection (gate rows, then up rows) and the down
// projection; the embedding, the final norm and the LM head (the embedding when tied). Also the
// map from Hugging Face tensor names to those places, and the random initialisation. CUDA-free.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/llama_config.hpp"
#include "engine/weight_init.hpp"

namespace infraplan::engine {

enum class LayerTensor { AttnNorm = 0, Qkv, O, FfnNorm, GateUp, Down };
constexpr int kLayerTensors = 6;

/// One tensor of the layout.
struct TensorSlot {
  std::string name;         ///< "layers.3.qkv", "embed", ...
  std::uint32_t id = 0;     ///< stable id (random initialisation stream)
  std::int64_t rows = 0;    ///< output features (1 for norms)
  std::int64_t cols = 0;    ///< input features
  std::int64_t offset = 0;  ///< first element in the buffer (a multiple of 64: 128-byte aligned)
  WeightInit init;          ///< random initialisation
  std::int64_t elems() const { return rows * cols; }
};

/// Where a Hugging Face tensor goes: `rows` rows of `slot` starting at `row0`.
struct HfPlacement {
  const TensorSlot* slot = nullptr;
  std::int64_t row0 = 0, rows = 0, cols = 0;
};

class WeightLayout {
 public:
  explicit WeightLayout(const LlamaConfig& c);
  const LlamaConfig& config() const { return c_; }
  const std::vector<TensorSlot>& tensors() const { return t_; }
  /// Elements of the whole buffer (bf16).
  std::int64_t total_elems() const { return total_; }
  const TensorSlot& embed() const { return t_[0]; }
  const TensorSlot& final_norm() const { return t_[1]; }
  /// The LM head ([vocab][hidden]); the embedding when the model ties them.
  const TensorSlot& lm_head() const { return c_.tied_embeddings ? t_[0] : t_[2]; }
  const TensorSlot& layer(int l, LayerTensor w) const {
    return t_[std::size_t(3 + l * kLayerTensors + int(w))];
  }
  /// Placement of a Hugging Face LLaMA tensor name ("model.layers.0.self_attn.k_proj.weight");
  /// nullopt for names the engine does not use (rotary inverse frequencies).
  std::optional<HfPlacement> hf_placement(const std::string& name) const;
  /// Every Hugging Face name the layout needs (to report missing tensors).
  std::vector<std::string> hf_names() const;
  /// The whole buffer of random weights on the host (small models, tests): bf16 bits.
  std::vector<std::uint16_t> random_host(std::uint64_t seed) const;

 private:
  LlamaConfig c_;
  std::vector<TensorSlot> t_;
  std::int64_t total_ = 0;
};

}  // namespace infraplan::engine

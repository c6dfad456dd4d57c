#pragma once
// ReferenceModel: a plain host implementation of the LLaMA decoder the CUDA engine runs, one
// token at a time with a per-sequence KV cache, double accumulation everywhere. It rounds to bf16
// exactly where the GPU model stores bf16 (embedding, residual stream, normed activations, QKV,
// rotated q/k, the KV cache, attention output, projections, SwiGLU output), so the two differ only
// by accumulation order and the GPU's bf16 attention probabilities; logits stay in float. For
// small shapes (tests): it is slow by design. CUDA-free.
#include <cstdint>
#include <vector>

#include "engine/llama_config.hpp"
#include "engine/weight_layout.hpp"

namespace infraplan::engine {

class ReferenceModel {
 public:
  /// `weights`: bf16 bits in WeightLayout order (WeightLayout::random_host, or copied back).
  ReferenceModel(const LlamaConfig& c, std::vector<std::uint16_t> weights);

  /// One sequence's cache: per layer, [position][kv_dim] keys and values (bf16-rounded floats).
  struct State {
    std::vector<std::vector<float>> k, v;
    std::int64_t len = 0;
  };
  State new_state() const;
  /// Feeds `token` at position state.len and returns the logits after it ([vocab]).
  std::vector<float> step(State& st, std::int32_t token) const;

 private:
  float w(const TensorSlot& t, std::int64_t i) const { return wf_[std::size_t(t.offset + i)]; }
  /// y[r] = bf16(Σ_c x[c] · W[r][c]) for the rows of `t`.
  std::vector<float> matvec(const TensorSlot& t, const std::vector<float>& x, bool round) const;
  std::vector<float> rmsnorm(const std::vector<float>& x, const TensorSlot& wt) const;

  LlamaConfig c_;
  WeightLayout layout_;
  std::vector<float> wf_;    // weights as floats
  std::vector<float> rope_;  // rope_table(c)
};

}  // namespace infraplan::engine

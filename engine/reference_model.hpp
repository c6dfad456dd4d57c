#pragma once
// ReferenceModel: a plain host implementation of the LLaMA decoder the CUDA engine runs, one
// token at a time with a per-sequence KV cache, double accumulation everywhere. It rounds to bf16
// exactly where the GPU model stores bf16 (embedding, residual stream, normed activations, QKV,
// rotated q/k, the KV cache, attention output, projections, SwiGLU output), so the two differ only
// by accumulation order and the GPU's bf16 attention probabilities; logits stay in float. For
// small shapes (tests): it is slow by design. CUDA-free.
//
// With fp8 weights (WeightFormat::FP8) it emulates the engine's W8A8 path exactly where the
// GPU quantizes: each layer's QKV, O, gate/up and down weights are rounded to E4M3 with one
// scale per tensor (amax / 448, engine/fp8_e4m3.hpp), and each of those GEMMs' inputs (bf16
// values) is rounded to E4M3 with the activation scale of the row's step; the GEMM is then the
// exact dot product of the E4M3 values times both scales, rounded to bf16. The GPU takes one
// activation scale over all rows of a step, which a row-at-a-time model cannot know: the caller
// passes the step's scales (Fp8Row), or the row is taken to be alone in its step (its own amax).
//
// With an fp8 KV cache (KvFormat::FP8) each rotated key and each value (bf16 values, as the GPU
// writes them) is stored as its E4M3 code under the layer's static scale (engine/kv_format.hpp):
// the scores are the exact dot products with the E4M3 values times the key scale, the output the
// probability-weighted sum of E4M3 values times the value scale — what the GPU's attention
// computes from the same codes. Independent of the weight format.
#include <cstdint>
#include <vector>

#include "engine/kv_format.hpp"
#include "engine/llama_config.hpp"
#include "engine/weight_format.hpp"
#include "engine/weight_layout.hpp"

namespace infraplan::engine {

/// fp8 only: the activation quantization of one row of ReferenceModel::step. Both arrays are
/// [layers][kFp8Gemms] (fp8_gemm_index order: the inputs of QKV, O, gate/up, down).
struct ReferenceFp8Row {
  /// The scales the row's step used (the engine's, per step); null: the row's own amax / 448.
  const float* act_scales = nullptr;
  /// Receives the row's own amax of each GEMM input (to check the engine's scales); may be null.
  float* row_amax = nullptr;
};

class ReferenceModel {
 public:
  /// `weights`: bf16 bits in WeightLayout order (WeightLayout::random_host, or copied back);
  /// `format`: FP8 quantizes the layers' linear weights as the engine does at load; `kv`: FP8
  /// stores keys and values as E4M3 with `kv_scales` (validated; empty: 1 everywhere).
  ReferenceModel(const LlamaConfig& c, std::vector<std::uint16_t> weights,
                 WeightFormat format = WeightFormat::BF16, KvFormat kv = KvFormat::BF16,
                 KvScales kv_scales = {});

  /// One sequence's cache: per layer, [position][kv_dim] keys and values (bf16-rounded floats;
  /// fp8 KV: their E4M3 values, unscaled).
  struct State {
    std::vector<std::vector<float>> k, v;
    std::int64_t len = 0;
  };
  State new_state() const;

  using Fp8Row = ReferenceFp8Row;
  /// Feeds `token` at position state.len and returns the logits after it ([vocab]).
  std::vector<float> step(State& st, std::int32_t token, const Fp8Row& fp8 = {}) const;

  WeightFormat format() const { return format_; }
  KvFormat kv_format() const { return kv_format_; }
  /// Rounds each attention probability to bf16 before the probabilities-times-values product, as
  /// the GPU's attention kernels feed them to bf16 matrix units (there relative to the running
  /// maximum of the online softmax, here to the row's maximum), the sum staying exact. Off by
  /// default: the reference is the exact model; on, it shows what that rounding alone changes.
  void set_bf16_attention_probabilities(bool on) { bf16_probabilities_ = on; }
  /// fp8 only: the dequantization scale of a layer's linear weight (amax / 448).
  float weight_scale(int layer, LayerTensor t) const;

 private:
  float w(const TensorSlot& t, std::int64_t i) const { return wf_[std::size_t(t.offset + i)]; }
  /// y[r] = bf16(Σ_c x[c] · W[r][c]) for the rows of `t`.
  std::vector<float> matvec(const TensorSlot& t, const std::vector<float>& x, bool round) const;
  /// A layer's linear layer on x (bf16 values): matvec in bf16; in fp8, x quantized with the
  /// row's activation scale and the dot product of the E4M3 values times both scales.
  std::vector<float> linear(int layer, LayerTensor t, const std::vector<float>& x, const Fp8Row& fp8) const;
  std::vector<float> rmsnorm(const std::vector<float>& x, const TensorSlot& wt) const;

  LlamaConfig c_;
  WeightLayout layout_;
  WeightFormat format_;
  KvFormat kv_format_;
  KvScales kv_scales_;
  bool bf16_probabilities_ = false;
  std::vector<float> wf_;      // weights as floats (fp8: the linear weights' E4M3 values, unscaled)
  std::vector<float> wscale_;  // fp8: per TensorSlot id, the dequantization scale (1 for bf16 tensors)
  std::vector<float> rope_;    // rope_table(c)
};

}  // namespace infraplan::engine

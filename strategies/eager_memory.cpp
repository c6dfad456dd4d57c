#include "strategies/eager_memory.hpp"

#include <vector>

#include "strategies/layer_widths.hpp"

namespace infraplan::strat {

bool uses_eager_activations(const model::ModelSpec& m, const TrainingConfig& t, std::int64_t layer) {
  return is_eager(framework_of(t)) && !(m.moe.enabled() && layer >= m.moe.dense_layers) && !m.mla.enabled() &&
         t.flash_attention;
}

double eager_activation_bytes_per_layer(const model::ModelSpec& m, const TrainingConfig& t,
                                        model::Recompute recompute) {
  const LayerWidths w = layer_widths(m, t);
  const bool amp = w.amp, hf = framework_of(t) == Framework::Transformers;
  const double tokens = w.tokens, h = w.h, q = w.q, kv = w.kv, f = w.f, resid = w.resid;
  if (recompute == model::Recompute::Full) return tokens * resid * h;
  const bool fused_qkv = m.position == model::PositionType::Learned;
  const bool swiglu = m.ffn_type == model::FfnType::SwiGLU;
  if (recompute == model::Recompute::SelectiveOp) {
    // Op-level selective checkpointing (torchtitan's policy): the block's input, the bf16 outputs
    // of its 1st, 3rd, ... matmuls in forward order (the 2nd, 4th, ... are recomputed) and SDPA's
    // output with its fp32 log-sum-exp per query head; everything else is rebuilt in backward.
    std::vector<double> mm_out = fused_qkv ? std::vector<double>{q + 2 * kv} : std::vector<double>{q, kv, kv};
    mm_out.push_back(h);              // output projection
    if (swiglu) mm_out.push_back(f);  // gate
    mm_out.push_back(f);              // up
    mm_out.push_back(h);              // down
    double per_token = resid * h + 2 * q + 4 * w.heads;
    for (std::size_t i = 0; i < mm_out.size(); i += 2) per_token += 2 * mm_out[i];
    return tokens * per_token;
  }
  // Norm inputs (2 per layer); transformers' RMSNorm also keeps one fp32 tensor per norm (its
  // input upcast, which x·rsqrt reads; in pure bf16 as under autocast: the saved-tensor listing
  // of docs/data/h200_saved_activations_eager.json).
  double per_token = 2 * resid * h;
  if (hf && m.norm == model::NormType::RMSNorm) per_token += 2 * 4 * h;
  // Projection inputs: autocast casts per projection; otherwise the normed tensor is shared.
  const double qkv_inputs = amp ? (fused_qkv ? 1 : 3) : 1;
  const double mlp_inputs = amp ? (swiglu ? 2 : 1) : 1;
  per_token += 2 * h * (qkv_inputs + mlp_inputs);
  // SDPA's saved q, k, v (repeated to the query heads by pytorch-eager) and its output.
  const bool repeat = !hf && kv < q;
  per_token += 2 * q + 2 * (repeat ? q : kv) * 2 + 2 * q;
  // MLP: SwiGLU keeps gate, up, SiLU(gate) and the product (the down projection's input);
  // GELU keeps its input and output.
  per_token += (swiglu ? 4 : 2) * 2 * f;
  return tokens * per_token;
}

}  // namespace infraplan::strat

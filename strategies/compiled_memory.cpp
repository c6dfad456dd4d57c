#include "strategies/compiled_memory.hpp"

#include "strategies/framework.hpp"
#include "strategies/layer_widths.hpp"

namespace infraplan::strat {

bool uses_compiled_activations(const model::ModelSpec& m, const TrainingConfig& t, std::int64_t layer) {
  return framework_of(t) == Framework::TorchCompile && !(m.moe.enabled() && layer >= m.moe.dense_layers) &&
         !m.mla.enabled() && t.flash_attention && m.norm == model::NormType::RMSNorm &&
         m.position == model::PositionType::Rope && m.ffn_type == model::FfnType::SwiGLU;
}

double compiled_activation_bytes_per_layer(const model::ModelSpec& m, const TrainingConfig& t,
                                           model::Recompute recompute) {
  const LayerWidths w = layer_widths(m, t);
  const double tokens = w.tokens, h = w.h, heads = w.heads, q = w.q, f = w.f, resid = w.resid;
  if (recompute == model::Recompute::Full) return tokens * resid * h;
  double per_token = 2 * resid * h + 2 * 2 * h;  // residual stream twice, two normed 16-bit inputs
  per_token += 4 * 2 * q;                        // rotated q, repeated k and v, SDPA output
  per_token += 3 * 2 * f;                        // gate, up, SiLU·mul
  per_token += 2 * 4 + 4 * heads;                // fp32 reciprocal RMS per norm, log-sum-exp per head
  return tokens * per_token;
}

}  // namespace infraplan::strat

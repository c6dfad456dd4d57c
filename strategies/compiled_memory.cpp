#include "strategies/compiled_memory.hpp"

#include <algorithm>

#include "strategies/framework.hpp"

namespace infraplan::strat {

bool uses_compiled_activations(const model::ModelSpec& m, const TrainingConfig& t, std::int64_t layer) {
  return framework_of(t) == Framework::TorchCompile && !(m.moe.enabled() && layer >= m.moe.dense_layers) &&
         !m.mla.enabled() && t.flash_attention && m.norm == model::NormType::RMSNorm &&
         m.position == model::PositionType::Rope && m.ffn_type == model::FfnType::SwiGLU;
}

double compiled_activation_bytes_per_layer(const model::ModelSpec& m, const TrainingConfig& t,
                                           model::Recompute recompute) {
  const bool amp = t.precision == Precision::AmpBF16;
  const double tokens = double(t.micro_batch) * double(t.seq_len) / std::max(1, t.cp);
  const double tp = std::max(1, t.tp);
  const double h = double(m.hidden);
  const double resid = amp ? 4 : 2;  // bytes of a residual-stream element
  if (recompute == model::Recompute::Full) return tokens * resid * h;
  const double heads = double(m.heads) / tp;
  const double q = heads * double(m.head_dim);
  const double f = double(m.ffn_hidden) / tp;
  double per_token = 2 * resid * h + 2 * 2 * h;  // residual stream twice, two normed 16-bit inputs
  per_token += 4 * 2 * q;                        // rotated q, repeated k and v, SDPA output
  per_token += 3 * 2 * f;                        // gate, up, SiLU·mul
  per_token += 2 * 4 + 4 * heads;                // fp32 reciprocal RMS per norm, log-sum-exp per head
  return tokens * per_token;
}

}  // namespace infraplan::strat

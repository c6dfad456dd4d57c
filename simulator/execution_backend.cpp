#include "simulator/execution_backend.hpp"

#include <algorithm>
#include <cmath>

#include "model/error.hpp"

namespace infraplan::sim::serve {

double AlphaBetaTpComm::all_reduce_seconds(double bytes, int n) const {
  if (n <= 1 || bytes <= 0) return 0;
  const double steps = 2.0 * double(n - 1);
  return base_ + steps * step_ + steps / double(n) * bytes / (GBps_ * 1e9 * eff_);
}

SimulatedBackend::SimulatedBackend(const model::ModelSpec& m, const strat::ServingConfig& s,
                                   const hw::CostModel& cm, const TpCommModel* comm, BackendOptions o)
    : m_(m), s_(s), cm_(cm), comm_(comm), o_(o) {
  tp_heads_ = std::max<std::int64_t>(1, m_.heads / s_.tp);
  tp_kv_heads_ = m_.mla.enabled() ? 1 : std::max<std::int64_t>(1, m_.kv_heads / s_.tp);
}

double SimulatedBackend::weight_gemm_seconds(std::int64_t m, std::int64_t n, std::int64_t k) const {
  m = std::max<std::int64_t>(m, 1);
  n = std::max<std::int64_t>(n, 1);
  k = std::max<std::int64_t>(k, 1);
  const Dtype d = strat::gemm_dtype(s_.weights);
  hw::GemmShape g{m, n, k, d, 1};
  if (d != Dtype::INT4) return cm_.gemm(g).seconds;
  // W4A16: weights stream at 0.5 B (+ group scales) and are dequantised on chip to fp16; the
  // math runs on the 16-bit tensor cores and the dequantisation costs extra issue slots.
  const double t = cm_.gemm(g).seconds;
  const auto fp16 = cm_.gpu().peak(Dtype::FP16);
  if (!fp16) return t;
  const double compute = o_.w4a16_dequant_factor * g.flops() / *fp16 + cm_.launch_overhead_seconds();
  return std::max(t, compute);
}

const SimulatedBackend::Dense& SimulatedBackend::dense(std::int64_t T) {
  auto it = dense_cache_.find(T);
  if (it != dense_cache_.end()) return it->second;
  Dense d;
  const std::int64_t h = m_.hidden, tp = s_.tp;
  const std::int64_t qd = m_.q_dim(),
                     kvd = m_.mla.enabled() ? m_.mla.kv_lora_rank + m_.mla.qk_rope_head_dim : m_.kv_dim();
  // Attention projections (QKV fused, O).
  const double attn = weight_gemm_seconds(T, (qd + 2 * kvd) / tp, h) + weight_gemm_seconds(T, h, qd / tp);
  auto ffn = [&](std::int64_t width, std::int64_t rows, std::int64_t split) {
    const std::int64_t up = (m_.ffn_type == model::FfnType::SwiGLU ? 2 : 1) * width / split;
    return weight_gemm_seconds(rows, up, h) + weight_gemm_seconds(rows, h, width / split);
  };
  const double dense_ffn = ffn(m_.ffn_hidden, T, tp);
  double moe_ffn = 0;
  if (m_.moe.enabled()) {
    const std::int64_t ep = s_.ep, split = ep > 1 ? 1 : tp;
    const double experts_here = double(m_.moe.experts) / double(ep);
    const double p_hit = 1.0 - std::pow(1.0 - double(m_.moe.top_k) / double(m_.moe.experts), double(T));
    const double active = std::max(1.0, experts_here * p_hit);
    const double rows = double(T) * double(m_.moe.top_k) / double(ep);
    const std::int64_t per_expert = std::max<std::int64_t>(1, std::int64_t(std::ceil(rows / active)));
    moe_ffn = active * ffn(m_.moe.expert_ffn_hidden, per_expert, split);
    if (m_.moe.shared_experts > 0) moe_ffn += ffn(m_.moe.expert_ffn_hidden * m_.moe.shared_experts, T, tp);
    moe_ffn += cm_.gemm({T, m_.moe.experts, h, Dtype::BF16, 1}).seconds;  // router
  }
  const double L = double(m_.layers), Lmoe = double(m_.moe_layers());
  d.gemm = L * attn + (L - Lmoe) * dense_ffn + Lmoe * moe_ffn;
  // Norms, residual adds, rotary, activation function: a few passes over the activations.
  const double act_bytes = 2.0 * double(T) * (10.0 * double(h) + 3.0 * double(m_.ffn_hidden / tp));
  d.other = L * cm_.memory_bound(act_bytes).seconds + cm_.memory_bound(2.0 * double(T * h)).seconds;
  if (comm_ && tp > 1) d.comm = 2.0 * L * comm_->all_reduce_seconds(2.0 * double(T * h), int(tp));
  if (comm_ && s_.pp > 1)
    d.comm += double(s_.pp - 1) * comm_->all_reduce_seconds(2.0 * double(T * h), 2) / 2.0;
  return dense_cache_.emplace(T, d).first->second;
}

double SimulatedBackend::dense_layer_seconds(std::int64_t tokens) {
  const Dense& d = dense(tokens);
  return (d.gemm + d.comm + d.other) / double(m_.layers);
}

double SimulatedBackend::lm_head_seconds(std::int64_t rows) {
  auto it = head_cache_.find(rows);
  if (it != head_cache_.end()) return it->second;
  double t = cm_.gemm({rows, std::max<std::int64_t>(1, m_.vocab / s_.tp), m_.hidden, Dtype::BF16, 1}).seconds;
  t += cm_.memory_bound(double(rows) * double(m_.vocab) * 4.0 * 2.0).seconds;  // softmax, top-p/top-k, sample
  if (comm_ && s_.tp > 1)
    t += comm_->all_reduce_seconds(double(rows) * double(m_.vocab / s_.tp) * 2.0, s_.tp) / 2.0;
  return head_cache_.emplace(rows, t).first->second;
}

StepCost SimulatedBackend::step(const BatchShape& b) {
  StepCost c;
  std::int64_t T = b.padding_seqs, rows = b.padding_seqs, decodes = b.padding_seqs;
  std::int64_t decode_ctx = b.padding_context, q_max = 1;
  const Dtype attn_dtype = s_.kv_dtype == Dtype::FP8 ? Dtype::FP8 : Dtype::BF16;
  const std::int64_t head_dim =
      m_.mla.enabled() ? m_.mla.kv_lora_rank + m_.mla.qk_rope_head_dim : m_.head_dim;
  const double L = double(m_.layers);
  for (const BatchItem& it : b.items) {
    T += it.q_tokens;
    if (it.samples) rows += it.prefill ? 1 : it.q_tokens;
    if (it.prefill) {
      const std::int64_t key = (it.q_tokens << 32) ^ it.context;
      auto f = prefill_attn_cache_.find(key);
      double a;
      if (f != prefill_attn_cache_.end()) {
        a = f->second;
      } else {
        hw::AttentionPrefillShape p{1,        it.q_tokens, it.context, tp_heads_, tp_kv_heads_,
                                    head_dim, true,        attn_dtype};
        a = cm_.attention_prefill(p).seconds;
        if (prefill_attn_cache_.size() < 200000) prefill_attn_cache_.emplace(key, a);
      }
      c.attention_s += L * a;
    } else {
      ++decodes;
      decode_ctx += it.context;
      q_max = std::max(q_max, it.q_tokens);
    }
  }
  if (decodes > 0) {
    hw::AttentionDecodeShape d{decodes, decode_ctx, tp_heads_ * q_max, tp_kv_heads_, head_dim, s_.kv_dtype};
    c.attention_s += L * cm_.attention_decode(d).seconds;
  }
  if (T > 0) {
    const Dense& d = dense(T);
    c.gemm_s = d.gemm;
    c.comm_s = d.comm;
    c.other_s = d.other;
  }
  if (rows > 0) c.other_s += lm_head_seconds(rows);
  c.host_s = o_.host_overhead_s;
  c.total_s = c.gemm_s + c.attention_s + c.comm_s + c.other_s + c.host_s;
  return c;
}

}  // namespace infraplan::sim::serve

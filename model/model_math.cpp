#include "model/model_math.hpp"

#include "common/error.hpp"

namespace infraplan::model {

double attention_params_per_layer(const ModelSpec& m) {
  const double h = double(m.hidden);
  double p = 0;
  if (m.mla.enabled()) {
    const double a = double(m.heads);
    const double qk = double(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim);
    if (m.mla.q_lora_rank > 0) {
      const double qr = double(m.mla.q_lora_rank);
      p += h * qr + qr * a * qk;  // down and up projections of the queries
    } else {
      p += h * a * qk;
    }
    const double kr = double(m.mla.kv_lora_rank);
    p += h * (kr + double(m.mla.qk_rope_head_dim));                   // joint KV down projection + rope key
    p += kr * a * double(m.mla.qk_nope_head_dim + m.mla.v_head_dim);  // K and V up projections
    p += a * double(m.mla.v_head_dim) * h;                            // output
  } else {
    const double q = double(m.q_dim()), kv = double(m.kv_dim());
    p += h * (q + 2 * kv) + q * h;
    if (m.qkv_bias || m.linear_bias) p += q + 2 * kv;
    if (m.linear_bias) p += h;
  }
  return p;
}

static double ffn_params(const ModelSpec& m, double width) {
  const double h = double(m.hidden);
  if (m.ffn_type == FfnType::SwiGLU) return 3 * h * width;
  double p = 2 * h * width;
  if (m.linear_bias) p += width + h;
  return p;
}

double mlp_params_of_layer(const ModelSpec& m, std::int64_t layer) {
  if (!m.moe.enabled() || layer < m.moe.dense_layers) return ffn_params(m, double(m.ffn_hidden));
  const double e = double(m.moe.expert_ffn_hidden);
  return double(m.moe.experts + m.moe.shared_experts) * ffn_params(m, e) +
         double(m.hidden) * double(m.moe.experts);  // router
}

double norm_params_per_layer(const ModelSpec& m) {
  double per_norm = m.norm == NormType::LayerNorm ? 2.0 * double(m.hidden) : double(m.hidden);
  double p = 2 * per_norm;
  if (m.mla.enabled()) p += double(m.mla.kv_lora_rank) + double(m.mla.q_lora_rank);  // latent norms
  return p;
}

ParamBreakdown count_params(const ModelSpec& m) {
  ParamBreakdown b;
  const double h = double(m.hidden);
  b.embedding = double(m.vocab) * h + (m.position == PositionType::Learned ? double(m.max_seq) * h : 0);
  b.lm_head = m.tied_embeddings ? 0 : double(m.vocab) * h;
  const double final_norm = m.norm == NormType::LayerNorm ? 2 * h : h;
  b.attention = attention_params_per_layer(m) * double(m.layers);
  b.norm = norm_params_per_layer(m) * double(m.layers) + final_norm;
  // Closed form over the two kinds of layers (leading dense ones, then MoE ones): no work per layer.
  double inactive = 0;
  const std::int64_t moe_layers = m.moe_layers(), dense_layers = m.layers - moe_layers;
  b.mlp = double(dense_layers) * mlp_params_of_layer(m, 0);
  if (moe_layers > 0) {
    b.mlp += double(moe_layers) * mlp_params_of_layer(m, m.layers - 1);
    const double one = ffn_params(m, double(m.moe.expert_ffn_hidden));
    b.expert = double(moe_layers) * double(m.moe.experts) * one;
    inactive = double(moe_layers) * double(m.moe.experts - m.moe.top_k) * one;
  }
  b.total = b.embedding + b.attention + b.mlp + b.norm + b.lm_head;
  b.active_per_token = b.total - inactive;
  return b;
}

double dense_forward_flops_per_token(const ModelSpec& m) {
  ParamBreakdown b = count_params(m);
  // Matmul parameters a token meets: everything active except the embedding lookup and norms;
  // a tied LM head still multiplies by the embedding matrix.
  double matmul = b.active_per_token - b.embedding - b.norm +
                  (m.tied_embeddings ? double(m.vocab) * double(m.hidden) : 0.0);
  return 2 * matmul;
}

double forward_flops_per_token(const ModelSpec& m, std::int64_t seq, bool causal) {
  double d_qk, d_v;
  if (m.mla.enabled()) {
    d_qk = double(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim);
    d_v = double(m.mla.v_head_dim);
  } else {
    d_qk = d_v = double(m.head_dim);
  }
  const double ctx = causal ? (double(seq) + 1) / 2 : double(seq);
  const double attn = 2 * double(m.heads) * (d_qk + d_v) * ctx * double(m.layers);
  return dense_forward_flops_per_token(m) + attn;
}

double training_flops_per_token(const ModelSpec& m, std::int64_t seq, bool causal) {
  return 3 * forward_flops_per_token(m, seq, causal);
}

double kv_bytes_per_token(const ModelSpec& m, Dtype kv_dtype) {
  const double bytes = dtype_bytes(kv_dtype);
  if (m.mla.enabled()) return double(m.layers) * double(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * bytes;
  return 2 * double(m.layers) * double(m.kv_heads) * double(m.head_dim) * bytes;
}

const char* recompute_name(Recompute r) {
  switch (r) {
    case Recompute::None:
      return "none";
    case Recompute::Selective:
      return "selective";
    case Recompute::SelectiveOp:
      return "selective-op";
    case Recompute::Full:
      return "full";
  }
  return "?";
}

std::vector<std::string> recompute_names() {
  std::vector<std::string> names;
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::SelectiveOp, Recompute::Full})
    names.push_back(recompute_name(r));
  return names;
}

Recompute parse_recompute(const std::string& s, const std::string& field) {
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::SelectiveOp, Recompute::Full})
    if (s == recompute_name(r)) return r;
  std::string valid;
  for (const std::string& n : recompute_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw Error(field + "='" + s + "' is not valid; valid choices: " + valid);
}

double activation_bytes_per_layer(const ModelSpec& m, std::int64_t seq, std::int64_t micro_batch,
                                  const ActivationOptions& o, std::int64_t layer) {
  if (o.tp < 1 || o.cp < 1) throw Error("activation_bytes_per_layer: tp and cp must be >= 1");
  const double s = double(seq) / double(o.cp);  // tokens of this rank's sequence shard
  const double b = double(micro_batch);
  const double sb = s * b;
  const double t = double(o.tp);
  const double e = o.act_bytes;
  const double h = double(m.hidden);
  const double mask = o.dropout ? 1.0 : 0.0;  // bytes per element of a dropout mask
  // The parts Megatron keeps replicated across TP ranks unless SP shards them:
  // two norm inputs, the attention and MLP block inputs, and the two residual dropout masks.
  const double replicated = (4 * e + 2 * mask) * h;
  const double shard = o.sp ? t : 1.0;

  if (o.recompute == Recompute::Full) return sb * e * h / shard;  // only the layer input is kept
  // Recompute::SelectiveOp is priced by the eager frameworks' own ledger (strategies/eager_memory.cpp);
  // training configs refuse it elsewhere, and here it keeps what no recomputation keeps.

  // Attention block, sharded by TP: Q and K for QKᵀ, V, the context fed to the output projection.
  double q = double(m.q_dim()), kv = double(m.kv_dim());
  double v_dim = m.mla.enabled() ? double(m.heads * m.mla.v_head_dim) : kv;
  double attn = e * (q + kv) + e * v_dim + e * (m.mla.enabled() ? double(m.heads * m.mla.v_head_dim) : q);
  // Score matrix terms (per token: a·s elements): softmax output, its dropout mask and output.
  double scores = 0;
  if (!o.flash_attention && o.recompute != Recompute::Selective) {
    scores = (e + (o.dropout ? mask + e : 0)) * double(m.heads) * s;
  }
  // MLP block, sharded by TP.
  double width;
  double experts_visited = 1;
  bool is_moe = m.moe.enabled() && (layer < 0 ? m.moe_layers() > 0 : layer >= m.moe.dense_layers);
  if (is_moe) {
    width = double(m.moe.expert_ffn_hidden);
    experts_visited = double(m.moe.top_k + m.moe.shared_experts);
  } else {
    width = double(m.ffn_hidden);
  }
  double mlp = m.ffn_type == FfnType::SwiGLU ? 3 * e * width : 2 * e * width;
  mlp *= experts_visited;
  if (is_moe) mlp += 4.0 * double(m.moe.experts) / t;  // router logits in fp32
  const double sharded = (attn + mlp) / t + scores / t;
  return sb * (replicated / shard + sharded);
}

}  // namespace infraplan::model

#include "strategies/eager_ops.hpp"

#include <algorithm>
#include <string>
#include <tuple>

namespace infraplan::strat {

namespace {

/// What decides an eager layer's kernels, from the model and the config.
struct Eager {
  bool amp = false;        ///< autocast: fp32 residual stream, norms, loss; casts before GEMMs
  bool hf = false;         ///< transformers' modules (its RMSNorm; GQA inside SDPA)
  bool fused_qkv = false;  ///< one QKV projection (learned-position GPT models) or three
  bool rope = false;       ///< rotary positions applied elementwise to q and k
  std::int64_t rep = 1;    ///< query heads per KV head repeated before SDPA (pytorch-eager GQA)
  bool swiglu = false;
  bool layernorm = false;
  double T = 0, h = 0, q = 0, kv = 0, f = 0;  ///< tokens and widths on this rank
  /// Table name of the norm kernel, forward or backward.
  std::string norm(bool fwd) const {
    if (layernorm) return std::string(amp ? "layer_norm_f32_" : "layer_norm_bf16_") + (fwd ? "fwd" : "bwd");
    return std::string(hf ? "rms_norm_hf_" : "rms_norm_") + (amp ? "f32_" : "bf16_") + (fwd ? "fwd" : "bwd");
  }
  /// Elementwise aten ops of one norm (host dispatch): fused kernels 1; transformers' RMSNorm is
  /// to(fp32), pow, mean, add, rsqrt, mul, to(dtype), mul forward and about as many backward.
  int norm_aten_ops() const { return !layernorm && hf ? 7 : 1; }
  double act() const { return amp ? 4 : 2; }  ///< bytes of a residual-stream element
};

Eager eager_of(const OpContext& c) {
  const auto& m = *c.model;
  const Shapes s = shapes(c);
  Eager e;
  e.amp = c.autocast;
  e.hf = c.framework == Framework::Transformers;
  e.fused_qkv = m.position == model::PositionType::Learned;
  e.rope = m.position == model::PositionType::Rope && !m.mla.enabled();
  e.rep = e.hf ? 1 : std::max<std::int64_t>(1, s.heads_r / s.kv_heads_r);
  e.swiglu = m.ffn_type == model::FfnType::SwiGLU;
  e.layernorm = m.norm == model::NormType::LayerNorm;
  e.T = double(s.T), e.h = double(s.h);
  e.q = double(s.heads_r * s.head_dim), e.kv = double(s.kv_heads_r * s.head_dim), e.f = double(s.ffn_r);
  return e;
}

/// A norm forward (fp32 under autocast) over the residual stream.
void norm_fwd(Builder& b, const Eager& e, const char* name, OpCategory cat) {
  const double th = e.T * e.h;
  b.eager(name, e.norm(true).c_str(), th, 2 * e.act() * th, cat, e.layernorm ? "layernorm" : "");
  if (!e.layernorm) b.aten(e.norm_aten_ops());
}

void norm_bwd(Builder& b, const Eager& e, const char* name) {
  const double th = e.T * e.h;
  b.eager(name, e.norm(false).c_str(), th, 3 * e.act() * th, OpCategory::Compute, e.layernorm ? "layernorm" : "");
  if (!e.layernorm) b.aten(e.norm_aten_ops());
}

/// Autocast's cast of a projection's fp32 input (the normed residual stream) to bf16.
void input_cast(Builder& b, const Eager& e, OpCategory cat) {
  if (e.amp) b.eager("input_cast", "cast_f32_bf16", e.T * e.h, 6 * e.T * e.h, cat);
}

/// A residual add: fp32 + bf16 under autocast, bf16 + bf16 otherwise.
void residual_add(Builder& b, const Eager& e, OpCategory cat) {
  const double th = e.T * e.h;
  b.eager("residual_add", e.amp ? "add_f32_bf16" : "add_bf16", th, (e.amp ? 10 : 6) * th, cat, "add");
}

/// The gradient arriving at a block: accumulated at the residual branch, cast to bf16 (autocast).
void residual_grad(Builder& b, const Eager& e) {
  const double th = e.T * e.h;
  b.eager("residual_grad", e.amp ? "add_inplace_f32" : "add_bf16", th, (e.amp ? 12 : 6) * th,
          OpCategory::Compute, "add");
  if (e.amp) b.eager("grad_cast", "cast_f32_bf16", th, 6 * th);
}

/// Input gradients of the `n` projections that read the same normed tensor: each bf16 gradient
/// cast to fp32 under autocast, and all but the first accumulated.
void input_grads_sum(Builder& b, const Eager& e, int n) {
  const double th = e.T * e.h;
  for (int i = 0; i < n; ++i) {
    if (e.amp) b.eager("dgrad_cast", "cast_bf16_f32", th, 6 * th);
    if (i > 0) {
      b.eager("dgrad_accumulate", e.amp ? "add_inplace_f32" : "add_bf16", th, (e.amp ? 12 : 6) * th);
      b.aten(1);
    }
  }
}

/// A projection's backward: the input gradient dX[T, k_in] = dY[T, n_out]·W[n_out, k_in] and the
/// weight gradient dW[n_out, k_in] (NN and NT layouts, as autograd runs them). `reduce`: the
/// input gradient of a column-parallel group is complete, its TP reduction runs beside the weight
/// gradient. Returns the op the compute stream waits for before using the input gradient.
int projection_bwd(Builder& b, const OpContext& c, const char* dgrad_name, const char* wgrad_name,
                   std::int64_t n_out, std::int64_t k_in, bool bias, bool reduce) {
  const std::int64_t T = c.tokens;
  b.dgrad(dgrad_name, T, k_in, n_out);
  b.module("linear");
  int dgrad = b.last(), wait = b.last();
  if (reduce) std::tie(dgrad, wait) = tp_input_grad(b, c);
  wgrad_gemm(b, c, wgrad_name, n_out, k_in, dgrad, "");
  if (bias) b.eager("bias_grad", "bias_grad_bf16", double(T) * double(n_out), 2 * double(T) * double(n_out));
  return reduce ? wait : b.last();
}

/// A layer's forward. `sac_recompute`: its recomputation in backward under op-level selective
/// checkpointing (torchtitan's policy): the outputs of the block's matmuls are saved but every
/// second one (1st, 3rd, ... in forward order kept; 2nd, 4th, ... recomputed), and attention's
/// output is saved, so those ops are skipped; every other op runs again.
void layer_forward(Builder& b, const OpContext& c, std::int64_t layer, OpCategory cat, bool sac_recompute) {
  const auto& m = *c.model;
  const Shapes s = shapes(c);
  const Eager e = eager_of(c);
  int mm_count = 0;
  auto mm = [&](const char* name, std::int64_t n, std::int64_t k) {
    if (sac_recompute && ++mm_count % 2 == 1) return;  // saved in forward
    b.gemm(name, s.T, n, k, cat);
    b.module("linear");
  };
  if (e.amp) {
    // Autocast casts every weight to bf16 once per forward.
    const double p = weight_cast_params(*c.cfg, layer_params_on_rank(m, *c.cfg, layer).total());
    b.eager("weight_cast", "cast_f32_bf16", p, 6 * p, cat);
  }
  norm_fwd(b, e, "norm1", cat);
  tp_collective(b, c, true, "", "tp_allgather", "");
  if (e.fused_qkv) {
    input_cast(b, e, cat);
    mm("qkv", s.qkv_n, s.h);
  } else {
    const std::int64_t kvn = s.kv_heads_r * s.head_dim;
    input_cast(b, e, cat);
    mm("q_proj", s.heads_r * s.head_dim, s.h);
    input_cast(b, e, cat);
    mm("k_proj", kvn, s.h);
    input_cast(b, e, cat);
    mm("v_proj", kvn, s.h);
  }
  if (e.rope) {
    const char* rope = e.amp ? "rope_amp_fwd" : "rope_bf16_fwd";
    b.eager("rope_q", rope, e.T * e.q, 6 * e.T * e.q, cat);
    b.aten(6);
    b.eager("rope_k", rope, e.T * e.kv, 6 * e.T * e.kv, cat);
    b.aten(6);
  }
  if (e.rep > 1) {
    // K (fp32 after autocast RoPE) and V repeated to the query heads: copies of the expanded size.
    b.eager("gqa_expand_k", e.amp && e.rope ? "gqa_expand_f32" : "gqa_expand_bf16", e.T * e.q,
            (e.amp && e.rope ? 5 : 2.5) * e.T * e.q, cat);
    b.aten(3);
    b.eager("gqa_expand_v", "gqa_expand_bf16", e.T * e.q, 2.5 * e.T * e.q, cat);
    b.aten(3);
  }
  if (e.amp && e.rope) {
    // SDPA under autocast casts the fp32 q and k to bf16.
    b.eager("sdpa_cast_q", "cast_f32_bf16", e.T * e.q, 6 * e.T * e.q, cat);
    const double k_el = e.T * (e.rep > 1 ? e.q : e.kv);
    b.eager("sdpa_cast_k", "cast_f32_bf16", k_el, 6 * k_el, cat);
  }
  if (!sac_recompute) {
    attention_core(b, c, s, false, cat);
    b.module("sdpa");
  }
  mm("attn_proj", s.h, s.o_k);
  tp_collective(b, c, false, "tp_allreduce", "", "tp_reducescatter");
  residual_add(b, e, cat);
  norm_fwd(b, e, "norm2", cat);
  tp_collective(b, c, true, "", "tp_allgather", "");
  const double tf = e.T * e.f;
  if (e.swiglu) {
    input_cast(b, e, cat);
    mm("mlp_gate", s.ffn_r, s.h);
    input_cast(b, e, cat);
    mm("mlp_up", s.ffn_r, s.h);
    b.eager("swiglu", "swiglu_bf16_fwd", tf, 6 * tf, cat);
    b.aten(2);
  } else {
    input_cast(b, e, cat);
    mm("mlp_up", s.ffn_r, s.h);
    b.eager("activation", "gelu_bf16_fwd", tf, 4 * tf, cat, "gelu");
  }
  mm("mlp_down", s.h, s.ffn_r);
  tp_collective(b, c, false, "tp_allreduce", "", "tp_reducescatter");
  residual_add(b, e, cat);
}

}  // namespace

bool uses_eager_ops(const OpContext& c, std::int64_t layer) {
  return is_eager(c.framework) && !is_moe_layer(*c.model, layer);
}

void eager_layer_forward(Builder& b, const OpContext& c, std::int64_t layer, OpCategory cat) {
  layer_forward(b, c, layer, cat, false);
}

void eager_layer_backward(Builder& b, const OpContext& c, std::int64_t layer) {
  const auto& m = *c.model;
  const auto& t = *c.cfg;
  const Shapes s = shapes(c);
  const Eager e = eager_of(c);
  const bool bias = m.linear_bias;
  if (t.recompute == model::Recompute::Full) eager_layer_forward(b, c, layer, OpCategory::Recompute);
  if (t.recompute == model::Recompute::SelectiveOp) layer_forward(b, c, layer, OpCategory::Recompute, true);
  // MLP block.
  residual_grad(b, e);
  tp_collective(b, c, true, "", "tp_allgather_grad", "");
  const double tf = e.T * e.f;
  projection_bwd(b, c, "mlp_down_dgrad", "mlp_down_wgrad", s.h, s.ffn_r, bias, false);
  int tp_comm = 0;
  if (e.swiglu) {
    b.eager("swiglu_bwd", "swiglu_bf16_bwd", tf, 10 * tf);
    b.aten(3);
    projection_bwd(b, c, "mlp_up_dgrad", "mlp_up_wgrad", s.ffn_r, s.h, false, false);
    tp_comm = projection_bwd(b, c, "mlp_gate_dgrad", "mlp_gate_wgrad", s.ffn_r, s.h, false, true);
    b.compute("tp_wait", 0, 0, OpCategory::Compute, {b.last(), tp_comm});
    input_grads_sum(b, e, 2);
  } else {
    b.eager("activation_bwd", "gelu_bf16_bwd", tf, 6 * tf, OpCategory::Compute, "gelu");
    tp_comm = projection_bwd(b, c, "mlp_up_dgrad", "mlp_up_wgrad", s.ffn_r, s.h, bias, true);
    b.compute("tp_wait", 0, 0, OpCategory::Compute, {b.last(), tp_comm});
    input_grads_sum(b, e, 1);
  }
  norm_bwd(b, e, "norm2_bwd");
  // Attention block.
  residual_grad(b, e);
  tp_collective(b, c, true, "", "tp_allgather_grad", "");
  projection_bwd(b, c, "attn_proj_dgrad", "attn_proj_wgrad", s.h, s.o_k, bias, false);
  if (t.recompute == model::Recompute::Selective) {
    attention_core(b, c, s, false, OpCategory::Recompute);
    b.module("");
  }
  attention_core(b, c, s, true, OpCategory::Compute);
  b.module("sdpa");
  if (e.amp && e.rope) {
    // SDPA's gradients of its autocast inputs back to fp32.
    b.eager("sdpa_grad_cast_q", "cast_bf16_f32", e.T * e.q, 6 * e.T * e.q);
    const double k_el = e.T * (e.rep > 1 ? e.q : e.kv);
    b.eager("sdpa_grad_cast_k", "cast_bf16_f32", k_el, 6 * k_el);
  }
  if (e.rep > 1) {
    b.eager("gqa_expand_k_bwd", e.amp && e.rope ? "gqa_expand_f32_bwd" : "gqa_expand_bf16_bwd", e.T * e.q,
            (e.amp && e.rope ? 5 : 2.5) * e.T * e.q);
    b.aten(1);
    b.eager("gqa_expand_v_bwd", "gqa_expand_bf16_bwd", e.T * e.q, 2.5 * e.T * e.q);
    b.aten(1);
  }
  if (e.rope) {
    const char* rope = e.amp ? "rope_amp_bwd" : "rope_bf16_bwd";
    b.eager("rope_k_bwd", rope, e.T * e.kv, 8 * e.T * e.kv);
    b.aten(6);
    b.eager("rope_q_bwd", rope, e.T * e.q, 8 * e.T * e.q);
    b.aten(6);
  }
  const bool qkv_bias = bias || m.qkv_bias;
  if (e.fused_qkv) {
    // dq, dk, dv assembled into the fused projection's gradient.
    const double tq = e.T * double(s.qkv_n);
    b.eager("qkv_grad_cat", "cat3_bf16", tq, 4 * tq);
    tp_comm = projection_bwd(b, c, "qkv_dgrad", "qkv_wgrad", s.qkv_n, s.h, qkv_bias, true);
    b.compute("tp_wait", 0, 0, OpCategory::Compute, {b.last(), tp_comm});
    input_grads_sum(b, e, 1);
  } else {
    // SDPA's [b, heads, s, d] gradients made contiguous as [b, s, heads·d] for each projection.
    const std::int64_t kvn = s.kv_heads_r * s.head_dim, qn = s.heads_r * s.head_dim;
    b.eager("v_grad_transpose", "transpose_copy_bf16", e.T * e.kv, 4 * e.T * e.kv);
    projection_bwd(b, c, "v_proj_dgrad", "v_proj_wgrad", kvn, s.h, qkv_bias, false);
    b.eager("k_grad_transpose", "transpose_copy_bf16", e.T * e.kv, 4 * e.T * e.kv);
    projection_bwd(b, c, "k_proj_dgrad", "k_proj_wgrad", kvn, s.h, qkv_bias, false);
    b.eager("q_grad_transpose", "transpose_copy_bf16", e.T * e.q, 4 * e.T * e.q);
    tp_comm = projection_bwd(b, c, "q_proj_dgrad", "q_proj_wgrad", qn, s.h, qkv_bias, true);
    b.compute("tp_wait", 0, 0, OpCategory::Compute, {b.last(), tp_comm});
    input_grads_sum(b, e, 3);
  }
  norm_bwd(b, e, "norm1_bwd");
  if (e.amp) {
    // Weight gradients back to the fp32 parameters' dtype.
    const double p = layer_params_on_rank(m, t, layer).total();
    b.eager("weight_grad_cast", "cast_bf16_f32", p, 6 * p);
  }
}

void eager_embedding_forward(Builder& b, const OpContext& c) {
  const Eager e = eager_of(c);
  const double th = e.T * e.h;
  b.mem("embedding", th * 2 * e.act());
  if (c.model->position == model::PositionType::Learned) {
    b.eager("position_add", e.amp ? "add_inplace_f32" : "add_bf16", th, (e.amp ? 12 : 6) * th,
            OpCategory::Compute, "add");
  }
  tp_collective(b, c, false, "tp_allreduce", "", "tp_reducescatter");
}

void eager_embedding_backward(Builder& b, const OpContext& c) {
  const Eager e = eager_of(c);
  const double th = e.T * e.h;
  if (e.amp) {
    // embedding_dense_backward: a zero-filled fp32 table gradient (the calibrated kernel fills a
    // 32,000-row table; the rest of the vocabulary is filled at the fp32 fill rate) and the
    // sorted scatter of the token gradients.
    b.eager("embedding_bwd", "embedding_bwd_f32", th, 8 * th);
    const double extra_rows = double(c.model->vocab / std::max(1, c.cfg->tp)) - 32000;
    if (extra_rows > 0) b.eager("embedding_grad_fill", "fill_f32", extra_rows * e.h, 4 * extra_rows * e.h);
  } else {
    const double vh = double(c.model->vocab / std::max(1, c.cfg->tp)) * e.h;
    b.mem("embedding_bwd", th * 6 + vh * 2);
  }
}

void eager_head_forward(Builder& b, const OpContext& c) {
  const auto& t = *c.cfg;
  const Eager e = eager_of(c);
  const std::int64_t v = c.model->vocab / t.tp;
  const double th = e.T * e.h, tv = e.T * double(v), vh = double(v) * e.h;
  norm_fwd(b, e, "final_norm", OpCategory::Compute);
  if (e.amp) {
    b.eager("final_norm_cast", "cast_f32_bf16", th, 6 * th);
    const double cast = weight_cast_params(*c.cfg, vh);
    b.eager("lm_head_weight_cast", "cast_f32_bf16", cast, 6 * cast);
  }
  tp_collective(b, c, true, "", "tp_allgather", "");
  b.gemm("lm_head", c.tokens, v, c.model->hidden);
  b.module("linear");
  // The loss in fp32: bf16 logits upcast, log-softmax over the vocabulary.
  b.eager("logits_cast", "cast_bf16_f32", tv, 6 * tv);
  b.aten(1);
  b.eager("cross_entropy", "log_softmax_f32_fwd", tv, 8 * tv);
  b.aten(2);
  if (t.tp > 1)
    b.comm("tp_allreduce_loss", OpCategory::CommTP, Stream::TP, CommOp::AllReduce, double(c.tokens) * 3 * 4,
           GroupKind::TP, {b.last()});
}

void eager_head_backward(Builder& b, const OpContext& c) {
  const auto& t = *c.cfg;
  const Eager e = eager_of(c);
  const std::int64_t v = c.model->vocab / t.tp;
  const double th = e.T * e.h, tv = e.T * double(v), vh = double(v) * e.h;
  b.eager("loss_grad_fill", "fill_f32", tv, 4 * tv);
  b.aten(2);
  b.eager("cross_entropy_bwd", "log_softmax_f32_bwd", tv, 12 * tv);
  b.aten(1);
  b.eager("logits_grad_cast", "cast_f32_bf16", tv, 6 * tv);
  b.aten(1);
  lm_head_backward_gemms(b, c, v, "linear");
  if (e.amp) {
    // The weight gradient to fp32; tied to the embedding it accumulates into the table's gradient.
    b.eager("lm_head_grad_cast", "cast_bf16_f32", vh, 6 * vh);
    if (c.model->tied_embeddings && t.pp == 1) b.eager("tied_grad_add", "add_inplace_f32", vh, 12 * vh);
  } else if (c.model->tied_embeddings && t.pp == 1) {
    b.eager("tied_grad_add", "add_bf16", vh, 6 * vh);
  }
  tp_collective(b, c, false, "tp_allreduce_grad", "", "tp_reducescatter_grad");
  if (e.amp) b.eager("norm_grad_cast", "cast_bf16_f32", th, 6 * th);
  norm_bwd(b, e, "final_norm_bwd");
}

}  // namespace infraplan::strat

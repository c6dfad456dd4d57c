#include "strategies/compiled_ops.hpp"

#include <algorithm>

namespace infraplan::strat {

namespace {

/// Widths and element sizes of one compiled layer on this rank.
struct Compiled {
  bool amp = false;
  double T = 0, h = 0, q = 0, kv = 0, f = 0;
  double rep = 1;     ///< query heads per KV head (K/V repeated to the query width before SDPA)
  bool rope = false;
  bool swiglu = false;
  bool fused_qkv = false;
  double resid() const { return amp ? 4 : 2; }  ///< bytes of a residual-stream element
  double kv_sdpa() const { return rep > 1 ? q : kv; }
};

Compiled compiled_of(const OpContext& c) {
  const auto& m = *c.model;
  const Shapes s = shapes(c);
  Compiled k;
  k.amp = c.autocast;
  k.T = double(s.T), k.h = double(s.h);
  k.q = double(s.heads_r * s.head_dim), k.kv = double(s.kv_heads_r * s.head_dim), k.f = double(s.ffn_r);
  k.rep = std::max(1.0, double(s.heads_r) / double(s.kv_heads_r));
  k.rope = m.position == model::PositionType::Rope && !m.mla.enabled();
  k.swiglu = m.ffn_type == model::FfnType::SwiGLU;
  k.fused_qkv = m.position == model::PositionType::Learned;
  return k;
}

/// Residual add + norm + cast: reads the stream and the branch output, writes both the stream
/// and the bf16 normed tensor.
void add_norm(Builder& b, const Compiled& k, const char* name, OpCategory cat) {
  b.mem(name, k.T * k.h * (2 * k.resid() + 2 + 2), cat);
}

/// Rotary positions (and K/V repeated to the query heads) as Inductor compiles them: the rotary
/// tables are fused into the rotation and their angles (pow, reciprocal, cos, sin in fp32)
/// recomputed for every element written, so the kernels are bound by that arithmetic, 4-8x their
/// bytes' time on the H200. Priced from the profile's measured rows
/// (framework.elementwise compiled_rope_{amp,pure}_{fwd,bwd}, bench/pytorch/compiled_rope.py): the
/// forward recomputes the angles for every element it writes, q and k as SDPA takes them (K
/// repeated to the query heads); the backward rotates the gradients once per query and KV head.
/// Without those rows, memory-bound over `bytes`.
void rope_repeat(Builder& b, const Compiled& k, const char* name, double bytes, bool backward,
                 OpCategory cat) {
  if (!k.rope) {
    b.mem(name, bytes, cat);
    return;
  }
  b.eager(name, compiled_rope_row(k.amp, backward).c_str(), k.T * (k.q + (backward ? k.kv : k.kv_sdpa())),
          bytes, cat);
}

}  // namespace

std::string compiled_rope_row(bool amp, bool backward) {
  return std::string("compiled_rope_") + (amp ? "amp" : "pure") + (backward ? "_bwd" : "_fwd");
}

bool uses_compiled_ops(const OpContext& c, std::int64_t layer) {
  return c.framework == Framework::TorchCompile && !is_moe_layer(*c.model, layer);
}

void compiled_layer_forward(Builder& b, const OpContext& c, std::int64_t layer, OpCategory cat) {
  const Shapes s = shapes(c);
  const Compiled k = compiled_of(c);
  if (k.amp) {
    const double p = weight_cast_params(*c.cfg, layer_params_on_rank(*c.model, *c.cfg, layer).total());
    b.mem("weight_cast", 6 * p, cat);
  }
  add_norm(b, k, "add_norm1", cat);
  tp_collective(b, c, true, "", "tp_allgather", "");
  if (k.fused_qkv) {
    b.gemm("qkv", s.T, s.qkv_n, s.h, cat);
  } else {
    b.gemm("q_proj", s.T, s.heads_r * s.head_dim, s.h, cat);
    b.gemm("k_proj", s.T, s.kv_heads_r * s.head_dim, s.h, cat);
    b.gemm("v_proj", s.T, s.kv_heads_r * s.head_dim, s.h, cat);
  }
  if (k.rope || k.rep > 1) {
    // q, k rotated (and cast), k and v repeated to the query heads: read once, written once.
    const double in = 2 * (k.q + 2 * k.kv), out = 2 * (k.q + 2 * k.kv_sdpa());
    rope_repeat(b, k, "rope_repeat", k.T * (in + out), false, cat);
  }
  attention_core(b, c, s, false, cat);
  b.gemm("attn_proj", s.T, s.h, s.o_k, cat);
  tp_collective(b, c, false, "tp_allreduce", "", "tp_reducescatter");
  add_norm(b, k, "add_norm2", cat);
  tp_collective(b, c, true, "", "tp_allgather", "");
  if (k.swiglu) {
    b.gemm("mlp_gate", s.T, s.ffn_r, s.h, cat);
    b.gemm("mlp_up", s.T, s.ffn_r, s.h, cat);
    b.mem("silu_mul", k.T * k.f * 6, cat);
  } else {
    b.gemm("mlp_up", s.T, s.ffn_r, s.h, cat);
    b.mem("gelu", k.T * k.f * 4, cat);
  }
  b.gemm("mlp_down", s.T, s.h, s.ffn_r, cat);
  tp_collective(b, c, false, "tp_allreduce", "", "tp_reducescatter");
}

void compiled_layer_backward(Builder& b, const OpContext& c, std::int64_t layer) {
  const auto& t = *c.cfg;
  const Shapes s = shapes(c);
  const Compiled k = compiled_of(c);
  if (t.recompute == model::Recompute::Full) compiled_layer_forward(b, c, layer, OpCategory::Recompute);
  // RMSNorm backward + residual gradient + casts: reads the stream gradient, the saved input and
  // the branch gradients, writes the stream gradient and its bf16 copy.
  const double norm_bwd = k.T * k.h * (3 * k.resid() + 2 * 2 + 2);
  tp_collective(b, c, true, "", "tp_allgather_grad", "");
  b.dgrad("mlp_down_dgrad", s.T, s.ffn_r, s.h);
  wgrad_gemm(b, c, "mlp_down_wgrad", s.ffn_r, b.last());
  b.mem(k.swiglu ? "silu_mul_bwd" : "gelu_bwd", k.T * k.f * (k.swiglu ? 10 : 6));
  const int up = b.dgrad("mlp_up_dgrad", s.T, s.h, s.ffn_r);
  wgrad_gemm(b, c, "mlp_up_wgrad", s.ffn_r, up);
  if (k.swiglu) {
    const int gate = b.dgrad("mlp_gate_dgrad", s.T, s.h, s.ffn_r);
    wgrad_gemm(b, c, "mlp_gate_wgrad", s.ffn_r, gate);
  }
  auto [dgrad, tp_comm] = tp_input_grad(b, c);
  b.compute("tp_wait", 0, 0, OpCategory::Compute, {b.last(), dgrad, tp_comm});
  b.mem("norm2_bwd", norm_bwd);
  tp_collective(b, c, true, "", "tp_allgather_grad", "");
  b.dgrad("attn_proj_dgrad", s.T, s.o_k, s.h);
  wgrad_gemm(b, c, "attn_proj_wgrad", s.o_k, b.last());
  if (t.recompute == model::Recompute::Selective) attention_core(b, c, s, false, OpCategory::Recompute);
  attention_core(b, c, s, true, OpCategory::Compute);
  if (k.rope || k.rep > 1) {
    const double in = 2 * (k.q + 2 * k.kv_sdpa()), out = 2 * (k.q + 2 * k.kv);
    rope_repeat(b, k, "rope_repeat_bwd", k.T * (in + out), true, OpCategory::Compute);
  }
  if (k.fused_qkv) {
    const int d = b.dgrad("qkv_dgrad", s.T, s.h, s.qkv_n);
    wgrad_gemm(b, c, "qkv_wgrad", s.qkv_n, d);
  } else {
    const std::int64_t kvn = s.kv_heads_r * s.head_dim, qn = s.heads_r * s.head_dim;
    const int v = b.dgrad("v_proj_dgrad", s.T, s.h, kvn);
    wgrad_gemm(b, c, "v_proj_wgrad", kvn, v);
    const int kk = b.dgrad("k_proj_dgrad", s.T, s.h, kvn);
    wgrad_gemm(b, c, "k_proj_wgrad", kvn, kk);
    const int q = b.dgrad("q_proj_dgrad", s.T, s.h, qn);
    wgrad_gemm(b, c, "q_proj_wgrad", qn, q);
  }
  auto [dgrad2, tp_comm2] = tp_input_grad(b, c);
  b.compute("tp_wait", 0, 0, OpCategory::Compute, {b.last(), dgrad2, tp_comm2});
  b.mem("norm1_bwd", norm_bwd);
  if (k.amp) {
    const double p = layer_params_on_rank(*c.model, t, layer).total();
    b.mem("weight_grad_cast", 6 * p);
  }
}

void compiled_head_forward(Builder& b, const OpContext& c) {
  const auto& t = *c.cfg;
  const Compiled k = compiled_of(c);
  const std::int64_t v = c.model->vocab / t.tp;
  const double tv = k.T * double(v);
  add_norm(b, k, "final_add_norm", OpCategory::Compute);
  if (k.amp) b.mem("lm_head_weight_cast", 6 * weight_cast_params(t, double(v) * k.h));
  tp_collective(b, c, true, "", "tp_allgather", "");
  b.gemm("lm_head", c.tokens, v, c.model->hidden);
  // Fused upcast + log-softmax + loss: the bf16 logits read twice (max, then sum and gather).
  b.mem("cross_entropy", tv * 2 * 2);
  if (t.tp > 1)
    b.comm("tp_allreduce_loss", OpCategory::CommTP, Stream::TP, CommOp::AllReduce, double(c.tokens) * 3 * 4,
           GroupKind::TP, {b.last()});
}

void compiled_head_backward(Builder& b, const OpContext& c) {
  const auto& t = *c.cfg;
  const Compiled k = compiled_of(c);
  const std::int64_t v = c.model->vocab / t.tp;
  const double tv = k.T * double(v);
  // Softmax gradient from the bf16 logits (recomputed), written as the bf16 logits' gradient.
  b.mem("cross_entropy_bwd", tv * (2 + 2));
  lm_head_backward_gemms(b, c, v, nullptr);
  if (k.amp) b.mem("lm_head_grad_cast", 6 * double(v) * k.h);
  tp_collective(b, c, false, "tp_allreduce_grad", "", "tp_reducescatter_grad");
  b.mem("final_norm_bwd", k.T * k.h * (3 * k.resid() + 2));
}

}  // namespace infraplan::strat

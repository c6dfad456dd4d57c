#include "strategies/op_builder.hpp"

#include <algorithm>
#include <cmath>

#include "model/model_math.hpp"

namespace infraplan::strat {

Shapes shapes(const OpContext& c) {
  const auto& m = *c.model;
  const auto& t = *c.cfg;
  Shapes s{};
  s.T = c.tokens, s.h = m.hidden, s.tp = t.tp;
  s.heads_r = m.heads / t.tp;
  s.kv_heads_r = std::max<std::int64_t>(1, m.kv_heads / t.tp);
  s.head_dim = m.mla.enabled() ? m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim : m.head_dim;
  const double v_dim = m.mla.enabled() ? double(m.mla.v_head_dim) : double(m.head_dim);
  const double o_params = double(m.heads) * v_dim * double(m.hidden);
  if (m.mla.enabled()) {
    // MLA's down/up projections priced as one GEMM of the same FLOPs (weights only, no biases).
    s.qkv_n =
        std::int64_t(std::llround((model::attention_params_per_layer(m) - o_params) / double(m.hidden))) /
        t.tp;
  } else {
    // The fused Q, K, V projection: this rank's query heads and its (possibly replicated) KV heads.
    s.qkv_n = m.q_dim() / t.tp + 2 * s.kv_heads_r * m.head_dim;
  }
  s.o_k = std::int64_t(double(m.heads) * v_dim) / t.tp;
  s.ffn_r = m.ffn_hidden / t.tp;
  s.up_mult = m.ffn_type == model::FfnType::SwiGLU ? 2 : 1;
  return s;
}

double attention_fwd_seconds(const OpContext& c, const Shapes& s, double* flops) {
  const auto& t = *c.cfg;
  hw::AttentionPrefillShape a;
  a.batch = t.micro_batch, a.q_len = t.seq_len, a.kv_len = t.seq_len;
  a.heads = s.heads_r, a.kv_heads = s.kv_heads_r, a.head_dim = s.head_dim, a.causal = true;
  a.dtype = c.gemm_dtype == Dtype::FP8 ? Dtype::BF16 : c.gemm_dtype;  // attention stays 16-bit
  a.kernel = t.attention_kernel;
  double sec = c.cost->attention_prefill(a).seconds / t.cp;
  *flops = a.flops() / t.cp;
  if (!t.flash_attention) {
    // Unfused attention writes and re-reads the b·a·s² score matrix (softmax, dropout).
    const double scores = double(t.micro_batch) * double(s.heads_r) * double(t.seq_len) * double(c.tokens);
    sec += c.cost->memory_bound(scores * c.act_bytes * 4).seconds;
  }
  return sec;
}

// Attention core with context parallelism: ring (KV chunks passed around while the local chunk
// is processed) or all-to-all (Ulysses: heads scattered, sequence gathered).
void attention_core(Builder& b, const OpContext& c, const Shapes& s, bool backward, OpCategory cat) {
  const auto& t = *c.cfg;
  double flops = 0;
  double sec = attention_fwd_seconds(c, s, &flops);
  const double mult = backward ? c.attention_bwd_ratio : 1.0;
  const char* name =
      backward ? "attention_bwd" : (cat == OpCategory::Recompute ? "attention_recompute" : "attention_fwd");
  if (t.cp == 1) {
    b.compute(name, mult * sec, mult * flops, cat);
    return;
  }
  const double kv_bytes =
      double(c.tokens) * 2.0 * double(s.kv_heads_r * s.head_dim) * c.act_bytes * (backward ? 2 : 1);
  if (c.cp_all_to_all) {
    const double qkv_bytes = double(c.tokens) * double(s.qkv_n) * c.act_bytes;
    b.comm("cp_alltoall_in", OpCategory::CommCP, Stream::CP, CommOp::AllToAll, qkv_bytes, GroupKind::CP);
    b.compute(name, mult * sec, mult * flops, cat, {b.last()});
    b.comm("cp_alltoall_out", OpCategory::CommCP, Stream::CP, CommOp::AllToAll,
           double(c.tokens) * double(s.o_k) * c.act_bytes, GroupKind::CP, {b.last()});
    b.compute("cp_sync", 0, 0, cat, {b.last()});
    return;
  }
  const int start = b.last();
  int prev_chunk = -1, prev_pass = start;
  for (int i = 0; i < t.cp; ++i) {
    std::vector<int> deps{prev_chunk >= 0 ? prev_chunk : start};
    if (i > 0) deps.push_back(prev_pass);
    if (i + 1 < t.cp)
      prev_pass = b.comm(backward ? "cp_ring_kv_dkv" : "cp_ring_kv", OpCategory::CommCP, Stream::CP,
                         CommOp::SendRecv, kv_bytes, GroupKind::CPNext, {i == 0 ? start : prev_pass});
    // Chunk i waits for the i-th KV pass (the pass for chunk i+1 runs meanwhile).
    prev_chunk = b.compute(name, mult * sec / t.cp, mult * flops / t.cp, cat, deps);
  }
}

// TP communication after a column/row-parallel pair: all-reduce without SP; with SP an
// all-gather before the column-parallel GEMM (`gather`) or a reduce-scatter after the row one.
void tp_collective(Builder& b, const OpContext& c, bool gather, const char* name_ar, const char* name_ag,
                   const char* name_rs) {
  const auto& t = *c.cfg;
  if (t.tp == 1) return;
  const double full = double(c.tokens) * double(c.model->hidden) * c.act_bytes;
  std::vector<int> deps{b.last()};
  if (!t.sp) {
    if (!gather)
      b.comm(name_ar, OpCategory::CommTP, Stream::TP, CommOp::AllReduce, full, GroupKind::TP, deps);
  } else {
    b.comm(gather ? name_ag : name_rs, OpCategory::CommTP, Stream::TP,
           gather ? CommOp::AllGather : CommOp::ReduceScatter, full, GroupKind::TP, deps);
  }
}

// The last op computed an input gradient: its TP reduction (reduce-scatter with SP) runs on the
// TP stream while the weight-gradient GEMM computes (Megatron's async TP gradient comm).
// Returns {the input-gradient op, the op the compute stream waits for before the norm}.
std::pair<int, int> tp_input_grad(Builder& b, const OpContext& c) {
  const auto& t = *c.cfg;
  const int dgrad = b.last();
  if (t.tp > 1)
    b.comm(t.sp ? "tp_reducescatter_grad" : "tp_allreduce_grad", OpCategory::CommTP, Stream::TP,
           t.sp ? CommOp::ReduceScatter : CommOp::AllReduce,
           double(c.tokens) * double(c.model->hidden) * c.act_bytes, GroupKind::TP, {dgrad});
  return {dgrad, b.last()};
}

// Weight gradient of a [n × hidden] weight over this micro-batch's tokens, after `dgrad`.
void wgrad_gemm(Builder& b, const OpContext& c, const char* name, std::int64_t n, int dgrad,
                const char* module) {
  wgrad_gemm(b, c, name, c.model->hidden, n, dgrad, module);
}

void wgrad_gemm(Builder& b, const OpContext& c, const char* name, std::int64_t out, std::int64_t in, int dgrad,
                const char* module) {
  hw::GemmShape g{out, in, c.tokens, c.gemm_dtype, 1, hw::GemmLayout::NT};
  b.compute(name, c.cost->gemm(g).seconds, g.flops(), OpCategory::Compute, {dgrad});
  b.module(module);
}

// The head's backward as the two GEMMs a framework runs: the input gradient dX[T, h] = dY[T, v]·W[v, h]
// and the weight gradient. Their shapes are not the forward's: with a vocabulary that is not a
// multiple of 8 (GPT-2's 50257) the forward writes misaligned rows and the backward GEMMs read
// them, which cuBLAS runs on other kernels at other speeds (PyTorch on the H200, gpt2-124m
// micro-batch 16: forward 13.4 ms, input gradient 9.0 ms, weight gradient 8.3 ms;
// docs/data/h200_pytorch_profile.json), not twice the forward.
void lm_head_backward_gemms(Builder& b, const OpContext& c, std::int64_t v, const char* module) {
  const int dgrad = b.dgrad("lm_head_dgrad", c.tokens, c.model->hidden, v);
  b.module(module);
  wgrad_gemm(b, c, "lm_head_wgrad", v, c.model->hidden, dgrad, "");
}

void norm(Builder& b, const OpContext& c, const char* name, double mult, OpCategory cat) {
  const double rows = c.cfg->sp ? double(c.tokens) / c.cfg->tp : double(c.tokens);
  b.mem(name, mult * 2.0 * rows * double(c.model->hidden) * c.act_bytes, cat);
}

bool is_moe_layer(const model::ModelSpec& m, std::int64_t layer) {
  return m.moe.enabled() && layer >= m.moe.dense_layers;
}

}  // namespace infraplan::strat

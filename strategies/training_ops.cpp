#include "strategies/training_ops.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "hardware/framework_costs.hpp"
#include "strategies/compiled_ops.hpp"
#include "strategies/eager_ops.hpp"
#include "strategies/op_builder.hpp"
#include "common/error.hpp"
#include "model/model_math.hpp"

namespace infraplan::strat {

const char* op_category_name(OpCategory c) {
  switch (c) {
    case OpCategory::Compute:
      return "compute";
    case OpCategory::Recompute:
      return "recompute";
    case OpCategory::Optimizer:
      return "optimizer";
    case OpCategory::Host:
      return "host";
    case OpCategory::CommTP:
      return "tp";
    case OpCategory::CommCP:
      return "cp";
    case OpCategory::CommEP:
      return "ep";
    case OpCategory::CommPP:
      return "pp";
    case OpCategory::CommDP:
      return "dp";
  }
  return "?";
}

const char* stream_name(Stream s) {
  switch (s) {
    case Stream::Compute:
      return "compute";
    case Stream::TP:
      return "tp";
    case Stream::CP:
      return "cp";
    case Stream::EP:
      return "ep";
    case Stream::PP:
      return "pp";
    case Stream::DP:
      return "dp";
    case Stream::DPGather:
      return "dp-gather";
    case Stream::Host:
      return "host";
  }
  return "?";
}

const char* comm_op_name(CommOp c) {
  switch (c) {
    case CommOp::AllReduce:
      return "all_reduce";
    case CommOp::AllGather:
      return "all_gather";
    case CommOp::ReduceScatter:
      return "reduce_scatter";
    case CommOp::AllToAll:
      return "alltoall";
    case CommOp::SendRecv:
      return "sendrecv";
  }
  return "?";
}

Dtype gemm_dtype_of(Precision p) {
  switch (p) {
    case Precision::FP8Mixed:
      return Dtype::FP8;
    case Precision::FP16Mixed:
      return Dtype::FP16;
    default:
      return Dtype::BF16;
  }
}

double grad_comm_bytes(Precision p) { return p == Precision::BF16Pure ? 2 : 4; }
double param_gather_bytes(const TrainingConfig& t) {
  return t.precision == Precision::AmpBF16 && t.zero < 3 ? 4 : 2;
}

double weight_cast_params(const TrainingConfig& t, double params) {
  if (t.precision != Precision::AmpBF16 || t.zero < 3) return params;
  const double shard = double(t.dp_shard > 0 ? t.dp_shard : t.dp) * t.cp;
  return params / std::max(1.0, shard);
}

double optimizer_bytes_per_param(Precision p, Optimizer o) {
  // Adam/LAMB read param, grad, m, v and write param, m, v; SGD reads param, grad, momentum and
  // writes param, momentum. Mixed recipes also write the 16-bit working copy; +1 grad read for
  // the gradient-norm pass (clipping).
  const double states = o == Optimizer::SGD ? 1 : 2;
  double master = 4, grad = 4, state = 4, copy = 0;
  switch (p) {
    case Precision::BF16Mixed:
    case Precision::FP16Mixed:
      copy = 2;
      break;
    case Precision::FP8Mixed:
      copy = 3;
      break;
    case Precision::AmpBF16:
      break;
    case Precision::BF16Pure:
      master = 2, grad = 2, state = 2;
      break;
  }
  return 2 * master + 2 * grad + 2 * states * state + copy;
}

double optimizer_step_seconds(const TrainingConfig& t, const hw::CostModel& cost, double params) {
  const double by_bytes = cost.memory_bound(params * optimizer_bytes_per_param(t.precision, t.optimizer)).seconds;
  if (params <= 0 || t.optimizer != Optimizer::AdamW) return by_bytes;
  const Framework f = framework_of(t);
  if (f != Framework::PytorchEager && f != Framework::Transformers && f != Framework::TorchCompile) return by_bytes;
  const char* dtype = t.precision == Precision::AmpBF16 ? "fp32" : t.precision == Precision::BF16Pure ? "bf16" : nullptr;
  const hw::Profile* p = cost.measured_profile();
  if (!dtype || !p || !p->framework) return by_bytes;
  const auto it = p->framework->fused_adamw.find(dtype);
  if (it == p->framework->fused_adamw.end() || it->second.empty()) return by_bytes;
  const auto& pts = it->second;
  // Seconds per parameter, interpolated in log(parameters); constant beyond the ends.
  auto rate = [](const std::pair<double, double>& q) { return q.second / q.first; };
  double r = rate(pts.front());
  if (params >= pts.back().first) {
    r = rate(pts.back());
  } else if (params > pts.front().first) {
    std::size_t i = 1;
    while (pts[i].first < params) ++i;
    const double w = std::log(params / pts[i - 1].first) / std::log(pts[i].first / pts[i - 1].first);
    r = rate(pts[i - 1]) + w * (rate(pts[i]) - rate(pts[i - 1]));
  }
  // Timed at the top clock; at a lower one the step slows by its measured clock share.
  const double clocked =
      cost.memory_clock_factor(hw::eager_op_clock_share(*p, std::string("fused_adamw_") + dtype));
  return std::max(params * r * clocked, cost.launch_overhead_seconds());
}

HostCosts host_costs_of(const TrainingConfig& t, const hw::CostModel& c) {
  HostCosts h;
  if (t.host_dispatch == HostDispatch::Off) return h;
  const hw::Profile* p = hw::profile_of(c);
  const hw::FrameworkProfile* f = p && p->framework ? &*p->framework : nullptr;
  const Framework fw = framework_of(t);
  // Op-level selective checkpointing re-runs the block's forward code in backward like full
  // checkpointing, and its policy (a Python dispatch mode) runs on every op of the forward and of the
  // recomputation: its own measured block ("…/selective-op", calibrate_framework.py
  // --llama-blocks-only) where the profile has one, else the host of a checkpointed block.
  const std::string block_prefix = std::string(framework_name(fw)) + "/" + precision_name(t.precision) + "/";
  std::string block_key = block_prefix + (checkpoints_blocks(t.recompute) ? "checkpointed" : "plain");
  if (t.recompute == model::Recompute::SelectiveOp && f && f->block_us.count(block_prefix + "selective-op"))
    block_key = block_prefix + "selective-op";
  const bool measured_block = f && f->block_us.count(block_key);
  // torch.compile: Inductor's generated wrapper launches its kernels directly (no per-op eager
  // dispatch); its host time is the measured compiled LLaMA block (framework.block_host_us
  // "torch-compile/...", calibrate_framework.py --llama-block-impls compile) and nothing without it.
  const bool compiled = fw == Framework::TorchCompile;
  if (compiled ? !measured_block : !f) {
    if (t.host_dispatch == HostDispatch::On)
      throw Error(compiled
                      ? "training.host_dispatch=on with framework torch-compile needs the compiled block's "
                        "host time in the profile (framework.block_host_us \"" +
                            block_key +
                            "\", calibrate_framework.py --llama-block-impls compile); use auto or off"
                      : std::string("training.host_dispatch=on needs a profile with a \"framework\" section "
                                    "(bench/pytorch/calibrate_framework.py); this cost model has none; use "
                                    "auto or off"));
    return h;
  }
  h.enabled = true;
  const double us = 1e-6 * c.host_time_factor();  // an uncertainty edge scales every host cost
  // The optimizer step runs eagerly in every PyTorch framework.
  h.opt_tensor = f->optimizer_us_per_tensor * us, h.opt_fixed = f->optimizer_us_fixed * us;
  if (measured_block && (compiled || (is_eager(fw) && (t.precision == Precision::AmpBF16 ||
                                                       t.precision == Precision::BF16Pure))))
    h.block = std::make_pair(f->block_us.at(block_key).first * us, f->block_us.at(block_key).second * us);
  if (compiled) {
    if (const auto it = f->pass_us.find(block_key); it != f->pass_us.end() && h.block)
      h.pass = std::make_pair(it->second.first * us, it->second.second * us);
    return h;
  }
  h.fwd_op = f->op_dispatch_us_forward * us, h.bwd_op = f->op_dispatch_us_backward * us;
  h.ckpt_fwd_block = f->checkpoint_us_forward_per_block * us;
  h.ckpt_bwd_block = f->checkpoint_us_backward_per_block * us;
  h.aten_fwd = (f->aten_op_us_forward > 0 ? f->aten_op_us_forward : f->op_dispatch_us_forward) * us;
  h.aten_bwd = (f->aten_op_us_backward > 0 ? f->aten_op_us_backward : f->op_dispatch_us_backward) * us;
  return h;
}

OpContext::OpContext(const model::ModelSpec& m, const TrainingConfig& t, const hw::CostModel& c, bool ulysses)
    : model(&m),
      cfg(&t),
      cost(&c),
      gemm_dtype(gemm_dtype_of(t.precision)),
      tokens(t.micro_batch * t.seq_len / std::max(1, t.cp)),
      act_bytes(2),
      cp_all_to_all(ulysses),
      host(host_costs_of(t, c)),
      autocast(t.precision == Precision::AmpBF16),
      framework(framework_of(t)),
      profile(hw::profile_of(c)) {
  if (const hw::Profile* p = profile) {
    hw::AttentionPrefillShape a;
    a.batch = t.micro_batch, a.q_len = t.seq_len, a.kv_len = t.seq_len;
    a.heads = std::max<std::int64_t>(1, m.heads / std::max(1, t.tp));
    a.kv_heads = std::max<std::int64_t>(1, m.kv_heads / std::max(1, t.tp));
    a.head_dim = m.mla.enabled() ? m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim : m.head_dim;
    a.kernel = t.attention_kernel;
    if (auto r = hw::attention_backward_ratio(*p, a)) attention_bwd_ratio = *r;
    // cuBLAS's memsets were counted in PyTorch steps' traces (eager and compiled); Megatron's
    // GEMMs (Transformer Engine through cuBLASLt) were not traced, so they stay unpriced there.
    if (framework != Framework::Megatron) memset_gemm_s = hw::memset_seconds_per_gemm(*p);
  }
}

std::vector<double> host_seconds_per_op(const OpContext& c, const std::vector<OpTemplate>& tpl, bool forward,
                                        bool layer) {
  std::vector<double> per(tpl.size(), 0.0);
  if (!c.host.enabled) return per;
  const bool block =
      layer && c.host.block && c.model->position == model::PositionType::Rope && !c.model->moe.enabled();
  if (!block && c.framework == Framework::TorchCompile)
    return per;  // no per-op dispatch in Inductor's wrapper
  int first = -1;
  double s = 0;
  for (std::size_t i = 0; i < tpl.size(); ++i) {
    const OpTemplate& o = tpl[i];
    if (o.stream != Stream::Compute || o.seconds <= 0) continue;
    if (first < 0) first = int(i);
    const bool fwd = forward || o.category == OpCategory::Recompute;
    double h = 0;
    if (o.aten_ops > 0) {
      h = o.aten_ops * (fwd ? c.host.aten_fwd : c.host.aten_bwd);
    } else if (o.module && !*o.module) {
      continue;  // inside another op's dispatch
    } else if (const auto us =
                   o.module && c.profile ? hw::module_host_us(*c.profile, o.module) : std::nullopt) {
      h = 1e-6 * (fwd ? us->first : us->second);
    } else {
      h = fwd ? c.host.fwd_op : c.host.bwd_op;
    }
    per[i] = h, s += h;
  }
  if (first < 0) return per;
  if (block) {
    // A rotary (LLaMA-architecture) dense layer of an eager framework: the measured block cost,
    // spread over the ops in proportion to the per-op dispatch model (evenly without one).
    const double total = forward ? c.host.block->first : c.host.block->second;
    if (c.framework == Framework::TorchCompile || !(s > 0)) {
      int n = 0;
      for (std::size_t i = 0; i < tpl.size(); ++i)
        n += tpl[i].stream == Stream::Compute && tpl[i].seconds > 0;
      for (std::size_t i = 0; i < tpl.size(); ++i)
        per[i] = tpl[i].stream == Stream::Compute && tpl[i].seconds > 0 ? total / n : 0.0;
    } else {
      for (double& h : per) h *= total / s;
    }
    return per;
  }
  if (layer && checkpoints_blocks(c.cfg->recompute))
    per[std::size_t(first)] += forward ? c.host.ckpt_fwd_block : c.host.ckpt_bwd_block;
  return per;
}

double host_seconds(const OpContext& c, const std::vector<OpTemplate>& tpl, bool forward, bool layer) {
  double s = 0;
  for (double h : host_seconds_per_op(c, tpl, forward, layer)) s += h;
  return s;
}

double param_tensors_of_layer(const model::ModelSpec& m, const TrainingConfig& t, std::int64_t layer) {
  (void)t;
  const double per_norm = m.norm == model::NormType::LayerNorm ? 2 : 1;
  const double bias = m.linear_bias ? 2 : 1;
  double n = 2 * per_norm;                            // two norms
  n += (m.qkv_bias || m.linear_bias ? 2 : 1) + bias;  // fused QKV, output projection
  const double mlp = (m.ffn_type == model::FfnType::SwiGLU ? 3 : 2) * bias;
  if (m.moe.enabled() && layer >= m.moe.dense_layers) {
    n += 1 + double(m.moe.experts) / std::max(1, t.ep) * mlp +
         double(m.moe.shared_experts) * mlp;  // router, experts
  } else {
    n += mlp;
  }
  return n;
}

double param_tensors_of_embedding(const model::ModelSpec& m) {
  return m.position == model::PositionType::Learned ? 2 : 1;
}

double param_tensors_of_head(const model::ModelSpec& m, const TrainingConfig& t) {
  const double norm = m.norm == model::NormType::LayerNorm ? 2 : 1;
  return norm + (m.tied_embeddings && t.pp == 1 ? 0 : 1);
}

double host_optimizer_seconds(const OpContext& c, double tensors) {
  return c.host.enabled ? c.host.opt_fixed + tensors * c.host.opt_tensor : 0;
}

namespace {

void forward_layer(Builder& b, const OpContext& c, std::int64_t layer, OpCategory cat) {
  const auto& m = *c.model;
  const auto& t = *c.cfg;
  const Shapes s = shapes(c);
  const double resid = (t.sp ? double(s.T) / t.tp : double(s.T)) * double(s.h) * c.act_bytes;
  if (t.precision == Precision::AmpBF16 || t.precision == Precision::FP8Mixed) {
    // Autocast / fp8 recipes cast the weights before use: read fp32 (or bf16), write the copy.
    const double p = weight_cast_params(t, layer_params_on_rank(m, t, layer).total());
    b.mem("weight_cast", p * (t.precision == Precision::AmpBF16 ? 6.0 : 3.0), cat);
  }
  norm(b, c, "norm1", 1, cat);
  tp_collective(b, c, true, "", "tp_allgather", "");
  b.gemm("qkv", s.T, s.qkv_n, s.h, cat);
  attention_core(b, c, s, false, cat);
  b.gemm("attn_proj", s.T, s.h, s.o_k, cat);
  tp_collective(b, c, false, "tp_allreduce", "", "tp_reducescatter");
  b.mem("residual_add", 3 * resid, cat);
  norm(b, c, "norm2", 1, cat);
  tp_collective(b, c, true, "", "tp_allgather", "");
  if (!is_moe_layer(m, layer)) {
    b.gemm("mlp_up", s.T, s.up_mult * s.ffn_r, s.h, cat);
    b.mem("activation", double(s.T) * double(s.ffn_r) * c.act_bytes * (s.up_mult + 1), cat);
    b.gemm("mlp_down", s.T, s.h, s.ffn_r, cat);
  } else {
    const auto& e = m.moe;
    const std::int64_t local_experts = e.experts / t.ep;
    const std::int64_t per_expert = std::int64_t(
        std::ceil(double(s.T) * double(e.top_k) * double(t.ep) / double(e.experts) * t.moe_imbalance));
    const std::int64_t ew = e.expert_ffn_hidden / t.tp;
    b.gemm("router", s.T, e.experts, s.h, cat);
    const double routed = double(s.T) * double(e.top_k) * double(s.h) * c.act_bytes;
    b.mem("permute", 2 * routed, cat);
    const int dispatch = b.comm("ep_dispatch", OpCategory::CommEP, Stream::EP, CommOp::AllToAll,
                                routed * t.moe_imbalance, GroupKind::EP, {b.last()});
    if (e.shared_experts > 0) {
      b.gemm("shared_up", s.T, s.up_mult * e.shared_experts * ew, s.h, cat);
      b.depend_last_on({dispatch - 1});  // overlaps the dispatch
      b.gemm("shared_down", s.T, s.h, e.shared_experts * ew, cat);
    }
    b.compute("expert_wait", 0, 0, cat, {b.last(), dispatch});
    b.gemm("expert_up", per_expert, s.up_mult * ew, s.h, cat, local_experts);
    b.mem("expert_activation",
          double(per_expert * local_experts) * double(ew) * c.act_bytes * (s.up_mult + 1), cat);
    b.gemm("expert_down", per_expert, s.h, ew, cat, local_experts);
    b.comm("ep_combine", OpCategory::CommEP, Stream::EP, CommOp::AllToAll, routed * t.moe_imbalance,
           GroupKind::EP, {b.last()});
    b.mem("unpermute", 2 * routed, cat);
  }
  tp_collective(b, c, false, "tp_allreduce", "", "tp_reducescatter");
  b.mem("residual_add", 3 * resid, cat);
}

}  // namespace

std::vector<OpTemplate> layer_forward_ops(const OpContext& c, std::int64_t layer) {
  Builder b(c);
  if (uses_eager_ops(c, layer))
    eager_layer_forward(b, c, layer, OpCategory::Compute);
  else if (uses_compiled_ops(c, layer))
    compiled_layer_forward(b, c, layer, OpCategory::Compute);
  else
    forward_layer(b, c, layer, OpCategory::Compute);
  return std::move(b.ops);
}

std::vector<OpTemplate> layer_backward_ops(const OpContext& c, std::int64_t layer) {
  const auto& m = *c.model;
  const auto& t = *c.cfg;
  const Shapes s = shapes(c);
  Builder b(c);
  if (uses_eager_ops(c, layer)) {
    eager_layer_backward(b, c, layer);
    return std::move(b.ops);
  }
  if (uses_compiled_ops(c, layer)) {
    compiled_layer_backward(b, c, layer);
    return std::move(b.ops);
  }
  if (t.recompute == model::Recompute::Full) forward_layer(b, c, layer, OpCategory::Recompute);
  const double resid = (t.sp ? double(s.T) / t.tp : double(s.T)) * double(s.h) * c.act_bytes;
  // MLP block backward (row-parallel down, column-parallel up).
  tp_collective(b, c, true, "", "tp_allgather_grad", "");
  if (!is_moe_layer(m, layer)) {
    b.gemm("mlp_down_bwd", s.T, s.h, s.ffn_r, OpCategory::Compute, 1, 2);
    b.mem("activation_bwd", double(s.T) * double(s.ffn_r) * c.act_bytes * (2 * s.up_mult + 1));
    b.dgrad("mlp_up_dgrad", s.T, s.h, s.up_mult * s.ffn_r);
  } else {
    const auto& e = m.moe;
    const std::int64_t local_experts = e.experts / t.ep;
    const std::int64_t per_expert = std::int64_t(
        std::ceil(double(s.T) * double(e.top_k) * double(t.ep) / double(e.experts) * t.moe_imbalance));
    const std::int64_t ew = e.expert_ffn_hidden / t.tp;
    const double routed = double(s.T) * double(e.top_k) * double(s.h) * c.act_bytes;
    b.mem("unpermute_bwd", 2 * routed);
    b.comm("ep_combine_bwd", OpCategory::CommEP, Stream::EP, CommOp::AllToAll, routed * t.moe_imbalance,
           GroupKind::EP, {b.last()});
    b.compute("expert_wait", 0, 0, OpCategory::Compute, {b.last()});
    b.gemm("expert_down_bwd", per_expert, s.h, ew, OpCategory::Compute, local_experts, 2);
    b.mem("expert_activation_bwd",
          double(per_expert * local_experts) * double(ew) * c.act_bytes * (2 * s.up_mult + 1));
    b.gemm("expert_up_bwd", per_expert, s.up_mult * ew, s.h, OpCategory::Compute, local_experts, 2);
    const int dispatch = b.comm("ep_dispatch_bwd", OpCategory::CommEP, Stream::EP, CommOp::AllToAll,
                                routed * t.moe_imbalance, GroupKind::EP, {b.last()});
    if (e.shared_experts > 0) {
      b.gemm("shared_bwd", s.T, s.h, 3 * e.shared_experts * ew, OpCategory::Compute, 1, 2);
      b.depend_last_on({dispatch - 1});  // overlaps the dispatch
    }
    b.compute("expert_wait", 0, 0, OpCategory::Compute, {b.last(), dispatch});
    b.mem("permute_bwd", 2 * routed);
    b.gemm("router_bwd", s.T, e.experts, s.h, OpCategory::Compute, 1, 2);
  }
  auto [dgrad, tp_comm] = tp_input_grad(b, c);
  if (!is_moe_layer(m, layer)) wgrad_gemm(b, c, "mlp_up_wgrad", s.up_mult * s.ffn_r, dgrad);
  b.compute("tp_wait", 0, 0, OpCategory::Compute, {b.last(), tp_comm});
  norm(b, c, "norm2_bwd", 2, OpCategory::Compute);
  b.mem("residual_bwd", 2 * resid);
  // Attention block backward.
  tp_collective(b, c, true, "", "tp_allgather_grad", "");
  b.gemm("attn_proj_bwd", s.T, s.h, s.o_k, OpCategory::Compute, 1, 2);
  if (t.recompute == model::Recompute::Selective) attention_core(b, c, s, false, OpCategory::Recompute);
  attention_core(b, c, s, true, OpCategory::Compute);
  b.dgrad("qkv_dgrad", s.T, s.h, s.qkv_n);
  auto [dgrad2, tp_comm2] = tp_input_grad(b, c);
  wgrad_gemm(b, c, "qkv_wgrad", s.qkv_n, dgrad2);
  b.compute("tp_wait", 0, 0, OpCategory::Compute, {b.last(), tp_comm2});
  norm(b, c, "norm1_bwd", 2, OpCategory::Compute);
  b.mem("residual_bwd", 2 * resid);
  return std::move(b.ops);
}

std::vector<OpTemplate> embedding_forward_ops(const OpContext& c) {
  Builder b(c);
  if (is_eager(c.framework)) {
    eager_embedding_forward(b, c);
    return std::move(b.ops);
  }
  b.mem("embedding", 2.0 * double(c.tokens) * double(c.model->hidden) * c.act_bytes);
  tp_collective(b, c, false, "tp_allreduce", "", "tp_reducescatter");
  return std::move(b.ops);
}

std::vector<OpTemplate> embedding_backward_ops(const OpContext& c) {
  Builder b(c);
  if (is_eager(c.framework)) {
    eager_embedding_backward(b, c);
    return std::move(b.ops);
  }
  b.mem("embedding_bwd", double(c.tokens) * double(c.model->hidden) * (c.act_bytes + 8));
  return std::move(b.ops);
}

std::vector<OpTemplate> head_forward_ops(const OpContext& c) {
  const auto& t = *c.cfg;
  Builder b(c);
  if (is_eager(c.framework)) {
    eager_head_forward(b, c);
    return std::move(b.ops);
  }
  if (c.framework == Framework::TorchCompile) {
    compiled_head_forward(b, c);
    return std::move(b.ops);
  }
  norm(b, c, "final_norm", 1, OpCategory::Compute);
  tp_collective(b, c, true, "", "tp_allgather", "");
  const std::int64_t v = c.model->vocab / t.tp;
  b.gemm("lm_head", c.tokens, v, c.model->hidden);
  // Vocab-parallel cross-entropy: max, sum-exp and target logit all-reduced over TP (fp32).
  b.mem("cross_entropy", double(c.tokens) * double(v) * (c.act_bytes + 4 + 4));
  if (t.tp > 1)
    b.comm("tp_allreduce_loss", OpCategory::CommTP, Stream::TP, CommOp::AllReduce, double(c.tokens) * 3 * 4,
           GroupKind::TP, {b.last()});
  return std::move(b.ops);
}

std::vector<OpTemplate> head_backward_ops(const OpContext& c) {
  const auto& t = *c.cfg;
  Builder b(c);
  const std::int64_t v = c.model->vocab / t.tp;
  if (is_eager(c.framework)) {
    eager_head_backward(b, c);
    return std::move(b.ops);
  }
  if (c.framework == Framework::TorchCompile) {
    compiled_head_backward(b, c);
    return std::move(b.ops);
  }
  b.mem("cross_entropy_bwd", double(c.tokens) * double(v) * (4 + c.act_bytes));
  lm_head_backward_gemms(b, c, v, nullptr);
  tp_collective(b, c, false, "tp_allreduce_grad", "", "tp_reducescatter_grad");
  norm(b, c, "final_norm_bwd", 2, OpCategory::Compute);
  return std::move(b.ops);
}

RankParams layer_params_on_rank(const model::ModelSpec& m, const TrainingConfig& t, std::int64_t layer) {
  RankParams r;
  const double attn = model::attention_params_per_layer(m) / t.tp;
  const double norm = model::norm_params_per_layer(m);
  if (!is_moe_layer(m, layer)) {
    r.dense = attn + norm + model::mlp_params_of_layer(m, layer) / t.tp;
    return r;
  }
  const double h = double(m.hidden), e = double(m.moe.expert_ffn_hidden);
  const double per_expert = (m.ffn_type == model::FfnType::SwiGLU ? 3.0 : 2.0) * h * e;
  r.expert = double(m.moe.experts) / t.ep * per_expert / t.tp;
  r.dense = attn + norm + double(m.moe.shared_experts) * per_expert / t.tp + h * double(m.moe.experts);
  return r;
}

RankParams embedding_params_on_rank(const model::ModelSpec& m, const TrainingConfig& t) {
  return {model::count_params(m).embedding / t.tp, 0};
}

RankParams head_params_on_rank(const model::ModelSpec& m, const TrainingConfig& t) {
  const double h = double(m.hidden);
  const double lm = m.tied_embeddings ? (t.pp > 1 ? double(m.vocab) * h : 0) : double(m.vocab) * h;
  return {lm / t.tp + (m.norm == model::NormType::LayerNorm ? 2 * h : h), 0};
}

}  // namespace infraplan::strat

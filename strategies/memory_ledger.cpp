#include "strategies/memory_ledger.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/error.hpp"
#include "model/model_math.hpp"
#include "strategies/compiled_memory.hpp"
#include "strategies/eager_memory.hpp"
#include "strategies/pipeline_layout.hpp"
#include "strategies/training_ops.hpp"
#include "strategies/training_schedule.hpp"

namespace infraplan::strat {

namespace {
constexpr double GiB = 1073741824.0;
std::string gib(double b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", b / GiB);
  return buf;
}
}  // namespace

double MemoryLedger::total_bytes() const {
  double t = 0;
  for (const auto& l : lines) t += l.bytes;
  return t;
}

double MemoryLedger::line(const std::string& name) const {
  for (const auto& l : lines)
    if (l.name == name) return l.bytes;
  return 0;
}

std::string MemoryLedger::verdict() const {
  double t = total_bytes();
  if (t <= capacity_bytes) return "fits (" + gib(t) + " of " + gib(capacity_bytes) + " GiB)";
  return "does not fit by " + gib(t - capacity_bytes) + " GiB (" + gib(t) + " of " + gib(capacity_bytes) +
         " GiB)";
}

Json MemoryLedger::to_json() const {
  Json l = Json::array();
  for (const auto& x : lines) l.push_back({{"name", x.name}, {"bytes", x.bytes}, {"note", x.note}});
  return {{"scope", scope},
          {"lines", l},
          {"total_bytes", total_bytes()},
          {"capacity_bytes", capacity_bytes},
          {"fits", fits()},
          {"verdict", verdict()}};
}

StateBytes state_bytes_per_param(Precision p, Optimizer o) {
  const double states = o == Optimizer::SGD ? 1 : 2;  // momentum; or Adam/LAMB first and second moments
  StateBytes b;
  switch (p) {
    case Precision::BF16Mixed:
    case Precision::FP16Mixed:
      b = {2, 4, 4 + 4 * states, 0};  // 16-bit params, fp32 main grads, fp32 master + states
      break;
    case Precision::FP8Mixed:
      b = {2, 4, 4 + 4 * states, 1};  // + fp8 weight copies for the fp8 GEMMs
      break;
    case Precision::AmpBF16:
      b = {4, 4, 4 * states, 2};  // fp32 everything + 16-bit casts kept for backward
      break;
    case Precision::BF16Pure:
      b = {2, 2, 2 * states, 0};
      break;
  }
  return b;
}

double inflight_microbatches(const TrainingConfig& t, int stage) {
  return schedule_inflight_microbatches(t.pp_schedule, t.pp, stage, t.micro_batches(), t.pp_virtual_stages);
}

MemoryLedger training_memory(const model::ModelSpec& m, const hw::Cluster& c, const TrainingConfig& t,
                             int stage, const Reserves& r) {
  if (stage < 0 || stage >= t.pp) throw Error("training_memory: stage out of range");
  if (t.dp < 1) throw Error("training_memory: resolve the training config first (dp is 0)");
  MemoryLedger L;
  L.scope = "training, one GPU of pipeline stage " + std::to_string(stage) + " of " + std::to_string(t.pp);
  L.capacity_bytes = c.gpu.hbm_bytes;

  // Parameters this GPU owns (before ZeRO sharding): the layers of every model chunk it holds
  // (pipeline_layout.hpp; DualPipe ranks hold two stages), the embedding with chunk 0 and the LM
  // head with the last chunk.
  const PipelineLayout pl = pipeline_layout(m, t);
  std::vector<std::int64_t> layers;
  bool has_embedding = false, has_head = false;
  for (int slot = 0; slot < pl.slots(); ++slot) {
    const int k = pl.chunk_at(stage, slot);
    const LayerRange range = pl.layers(k);
    for (std::int64_t l = range.first; l < range.first + range.count; ++l) layers.push_back(l);
    has_embedding |= pl.holds_embedding(k);
    has_head |= pl.holds_head(k);
  }
  const std::int64_t n_layers = std::int64_t(layers.size());
  const std::int64_t first = layers.empty() ? 0 : layers.front();
  double dense = 0, expert = 0;
  for (std::int64_t l : layers) {
    dense += model::attention_params_per_layer(m) + model::norm_params_per_layer(m);
    double mlp = model::mlp_params_of_layer(m, l);
    if (m.moe.enabled() && l >= m.moe.dense_layers) {
      double routed = mlp - double(m.hidden) * double(m.moe.experts);
      double shared = routed * double(m.moe.shared_experts) / double(m.moe.experts + m.moe.shared_experts);
      routed -= shared;
      dense += shared + double(m.hidden) * double(m.moe.experts);
      expert += routed;
    } else {
      dense += mlp;
    }
  }
  const auto pb = model::count_params(m);
  if (has_embedding) dense += pb.embedding;
  if (has_head) dense += m.tied_embeddings ? (t.pp > 1 ? pb.embedding : 0) : pb.lm_head;
  if (has_head) dense += m.norm == model::NormType::LayerNorm ? 2.0 * double(m.hidden) : double(m.hidden);
  const double tp = t.tp;
  const double dense_local = dense / tp;
  const double expert_local = expert / (tp * t.ep);
  const double params_local = dense_local + expert_local;

  // ZeRO shards over the data-parallel group: dp×cp for dense (HSDP: dp_shard×cp), dp×cp/ep for
  // experts.
  const double shard_dense = double(t.dp_shard > 0 ? t.dp_shard : t.dp) * t.cp;
  const double shard_expert = double(t.dp) * t.cp / t.ep;
  auto sharded = [&](double per_param, int min_stage) {
    if (t.zero >= min_stage) return per_param * (dense_local / shard_dense + expert_local / shard_expert);
    return per_param * params_local;
  };
  StateBytes sb = state_bytes_per_param(t.precision, t.optimizer);
  char note[240];
  std::string hsdp;
  if (t.zero >= 1 && t.dp_shard > 0 && t.dp_shard < t.dp)
    hsdp = " (HSDP: over " + std::to_string(int(shard_dense)) + " ranks, " + std::to_string(t.dp / t.dp_shard) +
           " replicas)";
  std::snprintf(note, sizeof note, "%.3gB params on this GPU × %.0f B%s", params_local, sb.params,
                t.zero >= 3 ? (", sharded by ZeRO-3" + hsdp).c_str() : "");
  L.lines.push_back({"parameters", sharded(sb.params, 3), note});
  std::snprintf(note, sizeof note, "%.0f B/param%s", sb.grads,
                t.zero >= 2 ? (", sharded by ZeRO-2/3" + hsdp).c_str() : "");
  L.lines.push_back({"gradients", sharded(sb.grads, 2), note});
  if (t.dp_buckets == DpBuckets::Copy && t.zero == 0 && t.dp * t.cp > 1)
    L.lines.push_back({"ddp_grad_buckets", sb.grads * params_local,
                       "PyTorch DDP's flat gradient buckets (gradient_as_bucket_view=False): a second copy of "
                       "the gradients"});
  std::snprintf(note, sizeof note, "%.0f B/param (%s, %s)%s", sb.optimizer, precision_name(t.precision),
                optimizer_name(t.optimizer), t.zero >= 1 ? (", sharded by ZeRO-1/2/3" + hsdp).c_str() : "");
  L.lines.push_back({"optimizer_states", sharded(sb.optimizer, 1), note});
  if (sb.copies > 0) {
    // amp-bf16 under ZeRO-3: FSDP's mixed precision keeps a bf16 copy of this GPU's shard and
    // gathers bf16 weights, which autocast does not cast again (training_ops.hpp,
    // weight_cast_params).
    const bool fsdp_amp = t.precision == Precision::AmpBF16 && t.zero >= 3;
    L.lines.push_back(
        {"weight_copies", fsdp_amp ? sharded(sb.copies, 3) : sb.copies * params_local,
         fsdp_amp ? "bf16 copy of this GPU's fp32 shard (FSDP mixed precision gathers bf16 weights)"
         : t.precision == Precision::AmpBF16 ? "bf16 casts of fp32 weights kept by autocast for backward"
                                             : "fp8 weight copies for fp8 GEMMs"});
  }
  if (t.zero >= 3) {
    // ZeRO-3 / FSDP gathers one layer's parameters (and prefetches the next) at a time.
    double layer_params = (model::attention_params_per_layer(m) + model::mlp_params_of_layer(m, first)) / tp;
    L.lines.push_back(
        {"zero3_gathered_params", 2 * layer_params * 2, "two layers' 16-bit parameters gathered"});
  }

  // Activations.
  model::ActivationOptions ao;
  ao.tp = t.tp;
  ao.sp = t.sp;
  ao.cp = t.cp;
  ao.recompute = t.recompute;
  ao.flash_attention = t.flash_attention;
  // Bytes one layer keeps: as eager autograd saves them, as Inductor's partition saves them, or
  // Megatron's formula.
  auto layer_bytes = [&](std::int64_t l, model::Recompute rc) {
    if (uses_eager_activations(m, t, l)) return eager_activation_bytes_per_layer(m, t, rc);
    if (uses_compiled_activations(m, t, l)) return compiled_activation_bytes_per_layer(m, t, rc);
    model::ActivationOptions o = ao;
    o.recompute = rc;
    return model::activation_bytes_per_layer(m, t.seq_len, t.micro_batch, o, l);
  };
  double per_mb = 0;
  std::int64_t checkpointed = 0;  // layers recomputed in full (recompute_layers may leave some out)
  for (std::int64_t l : layers) {
    const bool ck = layer_checkpointed(t, pl.position_in_chunk(l));
    per_mb += layer_bytes(l, ck ? t.recompute : model::Recompute::None);
    checkpointed += ck;
  }
  const double inflight = inflight_microbatches(t, stage);
  std::string rc = model::recompute_name(t.recompute);
  if (partial_recompute(t))
    rc += " on " + std::to_string(checkpointed) + " of " + std::to_string(n_layers) + " layers";
  std::snprintf(note, sizeof note,
                "%lld layers × %.2f GiB per micro-batch × %.2f in flight (%s, recompute %s)",
                static_cast<long long>(n_layers), per_mb / double(std::max<std::int64_t>(n_layers, 1)) / GiB,
                inflight, pp_schedule_name(t.pp_schedule), rc.c_str());
  L.lines.push_back({"activations", per_mb * inflight, note});
  if (t.recompute == model::Recompute::Full && checkpointed > 0)
    L.lines.push_back({"recompute_working_set", layer_bytes(first, model::Recompute::None),
                       "one layer's full activations rebuilt during backward"});
  if (t.recompute == model::Recompute::SelectiveOp)
    L.lines.push_back(
        {"recompute_working_set",
         std::max(0.0, layer_bytes(first, model::Recompute::None) -
                           layer_bytes(first, model::Recompute::SelectiveOp)),
         "one layer's recomputed activations (those selective-op does not save) during backward"});
  const double tokens = double(t.seq_len) / t.cp * double(t.micro_batch);
  if (has_embedding)
    L.lines.push_back(
        {"embedding_output", tokens * double(m.hidden) * 2 / (t.sp ? tp : 1), "16-bit embedding output"});
  const bool eager_grads = framework_of(t) != Framework::Megatron;
  if (has_head) {
    if (framework_of(t) == Framework::TorchCompile) {
      // Inductor fuses the fp32 upcast, log-softmax and NLL: the forward keeps the 16-bit logits
      // and a per-token log-sum-exp, and the backward's fused kernel writes the logits' 16-bit
      // gradient into the logits' own buffer (saved tensors are donated to the compiled
      // backward): one 16-bit logits tensor at the peak (docs/data/h200_saved_activations.json).
      L.lines.push_back({"logits_and_loss", tokens * double(m.vocab) / tp * 2,
                         "16-bit logits, their gradient written in place (loss fused by Inductor), vocab "
                         "split by tp"});
    } else if (eager_grads) {
      // PyTorch's loss at the start of backward: the saved fp32 log-softmax output, the fp32
      // gradient nll_loss fills and log-softmax's fp32 input gradient (vocab split by tp).
      L.lines.push_back({"logits_and_loss", tokens * double(m.vocab) / tp * (4 + 4 + 4),
                         "fp32 log-softmax output + its gradient + the logits' fp32 gradient, vocab split by tp"});
    } else {
      // 16-bit logits, their fp32 copy for the loss and its gradient (vocab-parallel over tp).
      L.lines.push_back({"logits_and_loss", tokens * double(m.vocab) / tp * (2 + 4 + 4),
                         "logits (16-bit) + fp32 softmax/loss + fp32 gradient, vocab split by tp"});
    }
  }
  // With DDP (dp·cp > 1) the reducer's gradient buckets live for the whole step: no phases.
  if (eager_grads && t.zero < 2 && std::int64_t(t.dp) * t.cp == 1) {
    if (model::checkpoints_blocks(t.recompute) && is_eager(framework_of(t)) && n_layers > 0 &&
        checkpointed == n_layers) {
      // Under autocast the weight casts live in autocast's cache until the forward's context
      // exits: with checkpointing (full or op-level: the saved matmul outputs hold no cast)
      // nothing else holds them, so backward meets only the LM head's
      // cast (kept by the loss's saved tensors) and, while a block is rebuilt, that block's.
      double head_cast = 0, block_cast = 0;
      if (t.precision == Precision::AmpBF16) {
        if (has_head) head_cast = sb.copies * double(m.vocab) * double(m.hidden) / tp;
        for (std::int64_t l : layers)
          block_cast = std::max(block_cast, sb.copies * layer_params_on_rank(m, t, l).total());
      }
      peak_of_checkpointed_phases(L, head_cast, block_cast);
    } else {
      peak_of_phases(L);
    }
  }
  L.lines.push_back({"cuda_context", r.cuda_context_bytes, "CUDA context, cuBLAS workspace"});
  if (t.gpus() > 1) {
    if (c.nccl_buffer_bytes > 0)
      L.lines.push_back({"nccl_buffers", c.nccl_buffer_bytes,
                         "NCCL channels and buffers, as the cluster calibration measured them (cluster "
                         "nccl_buffer_bytes)"});
    else
      L.lines.push_back({"nccl_buffers", r.nccl_bytes, "NCCL channels and buffers"});
  }
  return L;
}

namespace {
// A line that is not alive at the ledger's peak: 0 bytes, and its note says why and what it holds.
void zero_at_peak(LedgerLine& l, const std::string& why) {
  if (l.bytes <= 0) return;
  l.note = "0 at the peak (" + why + "): " + l.note + " = " + gib(l.bytes) + " GiB";
  l.bytes = 0;
}
}  // namespace

void peak_of_phases(MemoryLedger& L) {
  // PyTorch frees gradients before each step (zero_grad(set_to_none=True)) and allocates them
  // during backward as the saved activations are freed, so the two never peak together: the
  // peak is the larger of the start of backward (activations, weight copies, loss tensors) and
  // the optimizer step (every gradient). The phase not at the peak shows 0, with the reason.
  static const char* const kActivationPhase[] = {"weight_copies", "activations", "recompute_working_set",
                                                 "embedding_output", "logits_and_loss"};
  double acts = 0;
  for (const char* n : kActivationPhase) acts += L.line(n);
  const double grads = L.line("gradients");
  const bool at_step = grads > acts;
  for (auto& l : L.lines) {
    const bool act_line = std::find_if(std::begin(kActivationPhase), std::end(kActivationPhase),
                                       [&](const char* n) { return l.name == n; }) != std::end(kActivationPhase);
    if (at_step && act_line) zero_at_peak(l, "optimizer step; freed after backward");
    if (!at_step && l.name == "gradients")
      zero_at_peak(l, "start of backward; allocated as activations are freed, zero_grad(set_to_none)");
  }
}

void peak_of_checkpointed_phases(MemoryLedger& L, double head_cast_bytes, double block_cast_bytes) {
  // Three moments of a checkpointed step: the loss's backward (block inputs, the loss's tensors,
  // the LM head's cast; no gradient yet), a block rebuilt in backward (its full activations and
  // its weights' casts beside the block inputs still held, or beside the gradients already
  // written — the larger of the two ends), and the optimizer step (every gradient).
  const double inputs = L.line("activations") + L.line("embedding_output");
  const double loss = L.line("logits_and_loss"), rebuilt = L.line("recompute_working_set");
  const double grads = L.line("gradients");
  const double at_loss = inputs + loss + head_cast_bytes;
  const double at_rebuild = std::max(inputs, grads) + rebuilt + block_cast_bytes;
  enum { Loss, Rebuild, Step } phase = Loss;
  if (at_rebuild > at_loss) phase = Rebuild;
  if (grads > std::max(at_loss, at_rebuild)) phase = Step;
  const bool grads_at_rebuild = phase == Rebuild && grads > inputs;
  // Autocast's casts (head_cast_bytes, block_cast_bytes > 0); other weight copies stay as they are.
  const bool autocast_casts = head_cast_bytes > 0 || block_cast_bytes > 0;
  for (auto& l : L.lines) {
    if (l.name == "weight_copies" && (autocast_casts || phase == Step)) {
      const double kept = phase == Loss ? head_cast_bytes : phase == Rebuild ? block_cast_bytes : 0;
      if (phase == Step) {
        zero_at_peak(l, "optimizer step; casts freed after backward");
      } else if (l.bytes > 0) {
        l.note = gib(kept) +
                 " GiB at the peak (checkpointing: autocast's cache frees the blocks' casts "
                 "before backward; " +
                 std::string(phase == Loss ? "the LM head's cast" : "one rebuilt block's casts") +
                 " remain), of " + gib(l.bytes) + " GiB";
        l.bytes = kept;
      }
    } else if (l.name == "activations" || l.name == "embedding_output") {
      if (phase == Step) zero_at_peak(l, "optimizer step; freed after backward");
      if (grads_at_rebuild)
        zero_at_peak(l, "end of backward: the block inputs are freed as the gradients are written");
    } else if (l.name == "logits_and_loss") {
      if (phase != Loss) zero_at_peak(l, "freed after the loss's backward, before the blocks are rebuilt");
    } else if (l.name == "recompute_working_set") {
      if (phase != Rebuild)
        zero_at_peak(l, phase == Loss ? "built after the loss's backward" : "optimizer step");
    } else if (l.name == "gradients") {
      if (phase == Loss)
        zero_at_peak(l, "start of backward; allocated as the blocks are rebuilt, zero_grad(set_to_none)");
      if (phase == Rebuild && !grads_at_rebuild)
        zero_at_peak(l, "a block rebuilt beside the inputs still held");
    }
  }
}

MemoryLedger training_memory_peak(const model::ModelSpec& m, const hw::Cluster& c, const TrainingConfig& t,
                                  const Reserves& r) {
  MemoryLedger best = training_memory(m, c, t, 0, r);
  for (int s = 1; s < t.pp; ++s) {
    MemoryLedger l = training_memory(m, c, t, s, r);
    if (l.total_bytes() > best.total_bytes()) best = l;
  }
  return best;
}

double serving_weight_bytes_per_gpu(const model::ModelSpec& m, const ServingConfig& s) {
  auto pb = model::count_params(m);
  double dense = pb.total - pb.expert;
  double per_param = weight_bytes_per_param(s.weights, s.quant_group);
  // Embedding and LM head stay 16-bit in common quantized checkpoints.
  double embed = pb.embedding + pb.lm_head;
  double w = (dense - embed) * per_param + embed * 2 + pb.expert * per_param / s.ep;
  return w / (double(s.tp) * s.pp);
}

double serving_kv_bytes_per_token_per_gpu(const model::ModelSpec& m, const ServingConfig& s) {
  const double bytes = dtype_bytes(s.kv_dtype);
  const double layers = std::ceil(double(m.layers) / s.pp);
  if (m.mla.enabled()) return layers * double(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * bytes;
  const double heads = std::ceil(double(m.kv_heads) / s.tp);  // replicated when tp > kv_heads
  return 2 * layers * heads * double(m.head_dim) * bytes;
}

static double workspace_bytes(const model::ModelSpec& m, const ServingConfig& s) {
  // Peak transient activations of one engine step: max_batched_tokens through the widest layer
  // (QKV + FFN intermediate in 16-bit, TP-split) plus fp32 logits of the sampled rows.
  const double tokens = double(s.max_batched_tokens);
  const double ffn =
      m.moe.enabled() ? double(m.moe.expert_ffn_hidden) * double(m.moe.top_k) : double(m.ffn_hidden);
  double act = tokens * (2 * double(m.hidden) + (double(m.q_dim() + 2 * m.kv_dim()) + 2 * ffn) / s.tp) * 2;
  double logits = double(s.max_num_seqs) * double(m.vocab) * 4 / s.tp;
  return act + logits;
}

MemoryLedger serving_memory(const model::ModelSpec& m, const hw::GpuSpec& g, const ServingConfig& s,
                            std::int64_t batch, std::int64_t context, const Reserves& r) {
  if (batch < 0) throw Error("batch=" + std::to_string(batch) + " is invalid: must be >= 0");
  if (context < 0) throw Error("context=" + std::to_string(context) + " is invalid: must be >= 0");
  validate_serving(s, m, g);
  MemoryLedger L;
  L.scope =
      "serving, one GPU of a replica (tp=" + std::to_string(s.tp) + ", pp=" + std::to_string(s.pp) + ")";
  L.capacity_bytes = g.hbm_bytes;
  char note[200];
  std::snprintf(note, sizeof note, "%s weights (%.3g B/param), split over tp×pp=%d",
                weight_quant_name(s.weights), weight_bytes_per_param(s.weights, s.quant_group), s.tp * s.pp);
  L.lines.push_back({"weights", serving_weight_bytes_per_gpu(m, s), note});
  double kv_tok = serving_kv_bytes_per_token_per_gpu(m, s);
  std::snprintf(note, sizeof note, "%lld seqs × %lld tokens × %.0f B/token/GPU (%s)",
                static_cast<long long>(batch), static_cast<long long>(context), kv_tok,
                std::string(dtype_name(s.kv_dtype)).c_str());
  L.lines.push_back({"kv_cache", double(batch) * double(context) * kv_tok, note});
  L.lines.push_back(
      {"activation_workspace", workspace_bytes(m, s),
       "one step of max_batched_tokens=" + std::to_string(s.max_batched_tokens) + " + fp32 logits"});
  L.lines.push_back({"cuda_context", r.cuda_context_bytes, "CUDA context, cuBLAS workspace, CUDA graphs"});
  if (s.tp * s.pp > 1) L.lines.push_back({"nccl_buffers", r.nccl_bytes, "NCCL channels and buffers"});
  return L;
}

std::int64_t serving_kv_capacity_tokens(const model::ModelSpec& m, const hw::GpuSpec& g,
                                        const ServingConfig& s, const Reserves& r) {
  MemoryLedger L = serving_memory(m, g, s, 0, 0, r);
  double free_bytes = g.hbm_bytes * s.gpu_memory_utilization - L.total_bytes();
  if (free_bytes <= 0) return 0;
  return std::int64_t(free_bytes / serving_kv_bytes_per_token_per_gpu(m, s));
}

}  // namespace infraplan::strat

#pragma once
// The ops of one transformer layer (and of the embedding, LM head and optimizer) for one
// micro-batch on one rank, with their post-split shapes and cost-model durations: the building
// blocks of the work graph (work_graph.hpp) and of the closed-form training estimate.
//
// Shapes per rank: tokens T = micro_batch × seq_len / cp; TP splits heads and FFN columns
// (Megatron column/row parallel pairs); KV heads below tp are replicated; EP places
// experts / ep experts per rank, which receive T · top_k · moe_imbalance tokens after the
// dispatch all-to-all. GEMM dtype follows the precision recipe (fp8 for fp8-mixed, fp16 for
// fp16-mixed, bf16 otherwise). Backward GEMMs are dgrad + wgrad (2× forward FLOPs); the
// FlashAttention backward costs the measured backward / forward ratio of the profile's prefill
// table (hw::attention_backward_ratio) when it has one, else 2.5× its forward (5 matmuls
// instead of 2).
//
// Host dispatch (eager frameworks, profile "framework" section): the host issues one framework
// op per compute-stream op of non-zero duration (forward and recompute ops at the forward rate,
// backward ops at the backward rate), plus the activation-checkpoint wrapper per layer under full
// recompute, and per optimizer step a cost per parameter tensor.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "hardware/cost_model.hpp"
#include "hardware/profile.hpp"
#include "model/model_spec.hpp"
#include "strategies/training_config.hpp"

namespace infraplan::strat {

/// What an op's time counts as in the breakdown.
/// Host: the host issuing ops (host-dispatch floor), not GPU work.
enum class OpCategory { Compute, Recompute, Optimizer, Host, CommTP, CommCP, CommEP, CommPP, CommDP };
const char* op_category_name(OpCategory c);
inline bool is_comm(OpCategory c) { return c >= OpCategory::CommTP; }

/// Streams of one GPU: one compute stream and one stream per communication kind (ZeRO-3
/// parameter gathers get their own, as FSDP does), and the host thread issuing the ops.
enum class Stream { Compute, TP, CP, EP, PP, DP, DPGather, Host };
constexpr int kStreams = 8;
const char* stream_name(Stream s);

/// Collective kinds the work graph uses (the simulator maps them to collectives/).
enum class CommOp { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv };
const char* comm_op_name(CommOp c);

/// Which process group a communication op runs on.
/// DPShard / DPReplica: HSDP's shard group (dp_shard data-parallel ranks × cp) and the group of
/// ranks holding the same shard in the other dp / dp_shard groups. PPMirror: a rank and the rank
/// holding the same two model stages in the other direction (DualPipe, pipeline_layout.hpp).
enum class GroupKind { None, TP, CP, CPNext, EP, DP, ExpertDP, PPNext, PPPrev, DPShard, DPReplica, PPMirror };

/// One op of a template. `deps` index earlier ops of the same template; an op with no deps
/// listed depends on the previous op of the template's main chain (the compute stream).
struct OpTemplate {
  const char* name = "";  ///< static string, e.g. "qkv_fwd"
  OpCategory category = OpCategory::Compute;
  Stream stream = Stream::Compute;
  double seconds = 0;  ///< compute: cost-model duration; comm: 0 (the simulator prices it)
  double flops = 0;    ///< matmul FLOPs (GEMMs and attention), 0 for memory-bound ops
  double bytes = 0;    ///< comm: nccl-tests size of the collective; memory-bound: HBM bytes
  CommOp comm = CommOp::AllReduce;
  GroupKind group = GroupKind::None;
  std::vector<int> deps;  ///< template-local indices; empty: previous compute op
  bool explicit_deps = false;
  /// Host dispatch of an eager framework: nullptr = one framework op (the flat per-op cost);
  /// "" = launched inside another op's dispatch (no host cost of its own); else the module kind
  /// whose measured host cost applies ("linear", "layernorm", "gelu", "add", "sdpa").
  const char* module = nullptr;
  /// Host dispatch of an eager framework counted in elementwise aten ops (a composite such as
  /// elementwise RoPE issues several); > 0 overrides `module`.
  int aten_ops = 0;
};

/// Host-side costs of an eager framework, seconds; all 0 (enabled = false) when the config's
/// host_dispatch is off, or auto and the cost model's profile has no "framework" section.
struct HostCosts {
  bool enabled = false;
  double fwd_op = 0, bwd_op = 0;                  ///< per framework op
  double ckpt_fwd_block = 0, ckpt_bwd_block = 0;  ///< per checkpointed layer (full recompute)
  double opt_tensor = 0, opt_fixed = 0;           ///< optimizer step: per parameter tensor, per step
  double aten_fwd = 0, aten_bwd = 0;              ///< per elementwise aten op (OpTemplate::aten_ops)
  /// Per LLaMA-architecture layer as measured for this framework, precision and checkpointing
  /// (profile framework.block_host_us; the checkpointed backward includes the recompute): when
  /// set it replaces the per-op sum for rotary-position layers.
  std::optional<std::pair<double, double>> block;
  /// torch-compile: per call of the compiled forward / backward, beyond its blocks (profile
  /// framework.block_host_pass_us); added once per pass.
  std::optional<std::pair<double, double>> pass;
};
HostCosts host_costs_of(const TrainingConfig& t, const hw::CostModel& c);

/// Everything the templates need, computed once per (model, config).
struct OpContext {
  const model::ModelSpec* model = nullptr;
  const TrainingConfig* cfg = nullptr;
  const hw::CostModel* cost = nullptr;
  Dtype gemm_dtype = Dtype::BF16;
  std::int64_t tokens = 0;           ///< T = micro_batch · seq_len / cp
  double act_bytes = 2;              ///< bytes per activation element
  bool cp_all_to_all = false;        ///< Ulysses-style CP (all-to-all) instead of ring attention
  double attention_bwd_ratio = 2.5;  ///< attention backward / forward time (measured when the profile has it)
  HostCosts host;                    ///< host-dispatch costs (host.enabled = false: no floor)
  /// PyTorch autocast (precision amp-bf16): fp32 residual stream and norms, casts before GEMMs,
  /// fp32 loss; the op lists then hold the eager kernels autocast runs (docs/training.md).
  bool autocast = false;
  Framework framework = Framework::Megatron;  ///< framework_of(cfg), resolved

  const hw::Profile* profile = nullptr;  ///< the calibrated profile behind `cost`, if any
  /// GPU seconds cuBLAS's memsets add to a GEMM call of an eager step beyond the tables
  /// (framework.memsets; PyTorch frameworks only, 0 otherwise).
  double memset_gemm_s = 0;

  OpContext(const model::ModelSpec& m, const TrainingConfig& t, const hw::CostModel& c, bool ulysses = false);
};

/// GEMM dtype of a precision recipe.
Dtype gemm_dtype_of(Precision p);

/// Forward / backward ops of transformer layer `layer` (0-based; decides dense vs MoE FFN).
/// The backward list starts with the recompute ops the config asks for (selective: attention
/// core; full: the whole layer forward, its TP communication included).
std::vector<OpTemplate> layer_forward_ops(const OpContext& c, std::int64_t layer);
std::vector<OpTemplate> layer_backward_ops(const OpContext& c, std::int64_t layer);
/// Embedding lookup (first stage) and LM head + loss (last stage).
std::vector<OpTemplate> embedding_forward_ops(const OpContext& c);
std::vector<OpTemplate> embedding_backward_ops(const OpContext& c);
std::vector<OpTemplate> head_forward_ops(const OpContext& c);
std::vector<OpTemplate> head_backward_ops(const OpContext& c);

/// Host seconds to issue the compute ops of `tpl` (0 when c.host is disabled); `layer` adds the
/// checkpoint wrapper's cost under full recompute.
double host_seconds(const OpContext& c, const std::vector<OpTemplate>& tpl, bool forward, bool layer);
/// The same per op of `tpl` (0 for ops issued inside another op's dispatch and non-compute ops);
/// a measured block cost is spread over the layer's ops in proportion to the per-op model.
std::vector<double> host_seconds_per_op(const OpContext& c, const std::vector<OpTemplate>& tpl, bool forward,
                                        bool layer);
/// Parameter tensors (weights, biases, norm scales) of one layer on a rank, and of the embedding
/// (first stage) and head (last stage); the optimizer's host cost is per tensor.
double param_tensors_of_layer(const model::ModelSpec& m, const TrainingConfig& t, std::int64_t layer);
double param_tensors_of_embedding(const model::ModelSpec& m);
double param_tensors_of_head(const model::ModelSpec& m, const TrainingConfig& t);
/// Host seconds of one optimizer step over `tensors` parameter tensors (0 when disabled).
double host_optimizer_seconds(const OpContext& c, double tensors);

/// Parameters of layer `layer` on one rank, split into those reduced over the full DP×CP group
/// and routed-expert ones reduced over the expert-DP group (dp·cp / ep).
struct RankParams {
  double dense = 0, expert = 0;
  double total() const { return dense + expert; }
};
RankParams layer_params_on_rank(const model::ModelSpec& m, const TrainingConfig& t, std::int64_t layer);
/// Embedding (stage 0) and LM head + final norm (last stage) parameters on one rank.
RankParams embedding_params_on_rank(const model::ModelSpec& m, const TrainingConfig& t);
RankParams head_params_on_rank(const model::ModelSpec& m, const TrainingConfig& t);

/// Bytes of one gradient element on the wire (fp32 main grads for mixed recipes and AMP).
double grad_comm_bytes(Precision p);
/// Bytes of one parameter element gathered by ZeRO: 16-bit, or 4 for AMP's fp32 weights under
/// ZeRO-1/2; under ZeRO-3 always 16-bit (PyTorch FSDP's mixed precision gathers the parameters in
/// bf16, the setting of the bf16 FSDP recipes of accelerate, Lightning, Composer and torchtitan).
double param_gather_bytes(const TrainingConfig& t);
/// Parameters an autocast weight cast of a layer's `params` touches on one rank: all of them, or
/// under amp-bf16 with ZeRO-3 only this rank's shard (FSDP casts its fp32 shard to bf16 before
/// the all-gather, so autocast finds the gathered weights already in bf16 and casts none).
double weight_cast_params(const TrainingConfig& t, double params);
/// HBM bytes the optimizer step moves per local parameter (read + write, grad-norm pass included).
double optimizer_bytes_per_param(Precision p, Optimizer o);
/// GPU seconds of the optimizer step over `params` parameters of one rank. Eager PyTorch frameworks
/// with AdamW run torch's fused AdamW: its measured seconds per parameter (profile
/// framework.fused_adamw, interpolated in log(parameters), the end rates beyond the measured range)
/// when the profile has them; otherwise, and for Megatron's own optimizers, the bytes of
/// optimizer_bytes_per_param at the memory-bound rate.
double optimizer_step_seconds(const TrainingConfig& t, const hw::CostModel& cost, double params);

}  // namespace infraplan::strat

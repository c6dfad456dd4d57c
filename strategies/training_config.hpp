#pragma once
// TrainingConfig: how one training job is laid out (parallelism, batch, precision, recompute),
// parsed from a scenario's "training" object and validated against a model and a cluster.
#include <cstdint>
#include <string>
#include <vector>

#include "common/json_util.hpp"
#include "hardware/attention_kernel.hpp"
#include "hardware/cluster.hpp"
#include "model/model_math.hpp"
#include "model/model_spec.hpp"
#include "strategies/framework.hpp"

namespace infraplan::strat {

/// Pipeline schedules (strategies/training_schedule.hpp describes each, with its source).
enum class PpSchedule { GPipe, OneFOneB, Interleaved, ZBH1, DualPipe };
const char* pp_schedule_name(PpSchedule s);
/// Scenario names of the schedules: "gpipe", "1f1b", "interleaved", "zb-h1", "dualpipe".
std::vector<std::string> pp_schedule_names();

/// Precision recipes (bytes per parameter before sharding, with Adam):
/// bf16-mixed / fp16-mixed (Megatron: 16-bit params, fp32 main grads, fp32 master + 2 states) 18;
/// amp-bf16 (PyTorch autocast: fp32 params, grads, 2 states) 16 + 16-bit weight copies;
/// bf16-pure (everything bf16) 8; fp8-mixed (as bf16-mixed, GEMMs in fp8) 18 + fp8 weight copies.
enum class Precision { BF16Mixed, FP16Mixed, AmpBF16, BF16Pure, FP8Mixed };
const char* precision_name(Precision p);
std::vector<std::string> precision_names();

enum class Optimizer { AdamW, SGD, LAMB };
const char* optimizer_name(Optimizer o);

/// Host-dispatch floor of eager frameworks (PyTorch without CUDA graphs): per micro-batch the GPU
/// cannot finish before the host has issued every op (profile "framework" section). Auto: on when
/// the cost model's profile has that section; Off for CUDA-graph / fused-kernel runs.
enum class HostDispatch { Auto, On, Off };
const char* host_dispatch_name(HostDispatch h);

/// Where data-parallel gradients are reduced from (scenario key "dp_buckets"):
///  - Views: the gradients live in the communication buckets (Megatron's contiguous gradient
///    buffer, PyTorch DDP with gradient_as_bucket_view=True, FSDP): no copies.
///  - Copy: PyTorch DDP's default (gradient_as_bucket_view=False): a second, flat copy of the
///    gradients in buckets; each gradient is copied in as it is ready, the bucket divided by the
///    DP size and all-reduced, and after the last bucket every gradient is copied back
///    (torch/csrc/distributed/c10d/reducer.cpp). Costs memory (one more gradient copy) and HBM
///    traffic on the compute stream.
enum class DpBuckets { Views, Copy };
const char* dp_buckets_name(DpBuckets b);
struct TrainingConfig {
  std::int64_t seq_len = 4096;
  std::int64_t global_batch = 0;               ///< sequences per iteration (0: dp × micro_batch)
  std::int64_t micro_batch = 1;                ///< sequences per micro-batch per DP rank
  int tp = 1, pp = 1, dp = 0, cp = 1, ep = 1;  ///< dp = 0: derived from the GPU count
  bool sp = false;                             ///< sequence parallelism (needs tp > 1)
  int zero = 0;                                ///< ZeRO stage 0..3 (3 = FSDP full shard)
  PpSchedule pp_schedule = PpSchedule::OneFOneB;
  int pp_virtual_stages = 1;  ///< model chunks per pipeline rank (interleaved)
  /// Transformer layers per pipeline stage (pp entries), or per model chunk for the interleaved
  /// schedule (pp × pp_virtual_stages entries, chunk c of stage s at index c·pp + s); they sum
  /// to the model's layers. Empty: an even split (strategies/pipeline_layout.hpp).
  std::vector<std::int64_t> pp_layers;
  /// HSDP: ZeRO shards states inside groups of this many data-parallel ranks and replicates them
  /// across the dp / dp_shard groups (gradients: reduce-scatter inside the group, all-reduce of
  /// the shard across groups). 0 (default) resolves to dp: shard over all of DP (FSDP / ZeRO).
  int dp_shard = 0;
  /// Tokens the whole run trains on (goodput, time and cost to train); 0: 20 tokens per
  /// parameter (Chinchilla-optimal, Hoffmann et al. 2022), see training_goodput.hpp.
  double train_tokens = 0;
  model::Recompute recompute = model::Recompute::None;
  /// With recompute full: how many layers of each model chunk are checkpointed, the chunk's first
  /// ones (Megatron-LM's --recompute-num-layers with the block method); the others keep their
  /// activations. 0 (default): every layer. Scenario key "recompute_layers".
  std::int64_t recompute_layers = 0;
  Precision precision = Precision::BF16Mixed;
  Optimizer optimizer = Optimizer::AdamW;
  bool flash_attention = true;
  /// Scenario key "attention_kernel": which fused attention prices the attention ops (default: the
  /// profile's own tables; flash2: the FlashAttention-2 kernels' tables where the profile has them).
  hw::AttentionKernel attention_kernel = hw::AttentionKernel::Default;
  double moe_imbalance = 1.0;  ///< max/mean tokens per expert (≥ 1)
  HostDispatch host_dispatch = HostDispatch::Auto;  ///< scenario key "host_dispatch": auto | on | off
  /// Scenario key "framework" (framework.hpp); Auto: framework_of() picks by precision.
  Framework framework = Framework::Auto;
  DpBuckets dp_buckets = DpBuckets::Views;  ///< scenario key "dp_buckets": views | copy
  /// Gradient bucket size, MiB of gradients (scenario key "dp_bucket_mib"); 0: the default of the
  /// bucket kind (views: 40M parameters as Megatron; copy: 25 MiB as PyTorch DDP's bucket_cap_mb,
  /// its first bucket 1 MiB).
  double dp_bucket_mib = 0;
  /// Gradient bucket size in parameters for `grad_bytes` bytes per gradient.
  double bucket_params(double grad_bytes) const;
  /// Size of the first bucket of a backward, parameters (PyTorch DDP: 1 MiB; else bucket_params).
  double first_bucket_params(double grad_bytes) const;

  int gpus() const { return tp * pp * dp * cp; }
  /// Micro-batches per iteration per pipeline (gradient-accumulation steps).
  std::int64_t micro_batches() const { return global_batch / (std::int64_t(dp) * micro_batch); }
  Json to_json() const;
};

/// The framework a config runs in: its `framework`, or for Auto pytorch-eager under the PyTorch
/// recipes (amp-bf16, bf16-pure) and megatron under the others.
Framework framework_of(const TrainingConfig& t);

/// Parses a "training" object (all keys optional except where a cluster can't decide them).
TrainingConfig training_from_json(const Json& j, const std::string& path = "training");

/// Issues found by validation that do not stop the run ("TP crosses nodes").
struct Warnings {
  std::vector<std::string> items;
};

/// Fills derived fields (dp from the GPU count, global_batch default) and checks the config
/// against the model and cluster; throws infraplan::Error naming the field and valid choices.
Warnings resolve_training(TrainingConfig& t, const model::ModelSpec& m, const hw::Cluster& c);

/// Whether the layer at position `index_in_chunk` of its model chunk is recomputed as
/// `t.recompute` says (always, unless recompute_layers leaves it out of a full recompute).
bool layer_checkpointed(const TrainingConfig& t, std::int64_t index_in_chunk);
/// Whether recompute_layers is set (with recompute full): a chunk's layers past that count keep
/// their activations.
bool partial_recompute(const TrainingConfig& t);

/// Why recompute "selective-op" cannot be priced for framework `fw` on `m` with fused attention on
/// or off (the rest of the message after `training.recompute="selective-op" `), or "" when it can:
/// an eager framework (pytorch-eager, transformers), dense blocks, fused attention.
std::string selective_op_refusal(const model::ModelSpec& m, Framework fw, bool flash_attention);
/// The config the layers left out of a partial recompute run with (recompute none).
TrainingConfig without_recompute(const TrainingConfig& t);

/// Divisors of n (for "try 1, 2, 4, 8" hints).
std::vector<std::int64_t> divisors(std::int64_t n);

/// Layers held by pipeline stage `stage` without pp_layers (uneven splits give the first stages
/// one more layer). With pp_layers or chunks use strat::pipeline_layout.
std::int64_t layers_of_stage(const model::ModelSpec& m, int pp, int stage);

/// Model chunks each pipeline rank holds: pp_virtual_stages (interleaved), 2 (DualPipe), else 1.
int chunks_per_stage(const TrainingConfig& t);

}  // namespace infraplan::strat

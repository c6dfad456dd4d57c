#pragma once
// MemoryLedger: every byte a GPU holds, line by line, against its capacity.
#include <cstdint>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "common/json_util.hpp"
#include "model/model_spec.hpp"
#include "strategies/serving_config.hpp"
#include "strategies/training_config.hpp"

namespace infraplan::strat {

struct LedgerLine {
  std::string name;  ///< e.g. "parameters", "optimizer_states", "kv_cache"
  double bytes = 0;
  std::string note;  ///< how it was computed, for people
};

struct MemoryLedger {
  std::string scope;  ///< "training, pipeline stage 0" or "serving, one GPU of a replica"
  std::vector<LedgerLine> lines;
  double capacity_bytes = 0;

  double total_bytes() const;
  bool fits() const { return total_bytes() <= capacity_bytes; }
  /// "fits (71.2 of 79.6 GiB)" or "does not fit by 12.3 GiB (91.9 of 79.6 GiB)".
  std::string verdict() const;
  /// Bytes of one named line (0 when absent).
  double line(const std::string& name) const;
  /// {"scope", "lines": [{"name","bytes","note"}], "total_bytes", "capacity_bytes", "fits"}.
  Json to_json() const;
};

/// Fixed reserves per GPU, documented defaults (override per cluster later).
struct Reserves {
  double cuda_context_bytes = 0.5 * 1073741824.0;  ///< CUDA context, cuBLAS/cuDNN workspaces
  double nccl_bytes = 0.5 * 1073741824.0;          ///< NCCL buffers when any group has > 1 rank
};

/// Training state of one GPU on pipeline stage `stage` (every GPU of a stage holds the same).
MemoryLedger training_memory(const model::ModelSpec& m, const hw::Cluster& c, const TrainingConfig& t,
                             int stage, const Reserves& r = {});
/// Eager PyTorch on one data-parallel rank (every framework but megatron, ZeRO below 2, no DDP
/// buckets): gradients and saved activations
/// are never live together, so the peak is the larger phase; zeroes the other phase's lines
/// (their notes say what they would hold).
void peak_of_phases(MemoryLedger& L);
/// The same with activation checkpointing per block (docs/data/h200_saved_activations_eager.json):
/// the largest of the loss's backward, a block rebuilt in backward and the optimizer step. Under
/// autocast `head_cast_bytes` (the LM head's 16-bit cast) and `block_cast_bytes` (one block's) replace
/// the weight_copies line at the first two.
void peak_of_checkpointed_phases(MemoryLedger& L, double head_cast_bytes, double block_cast_bytes);

/// The stage with the largest total (ties → the earliest).
MemoryLedger training_memory_peak(const model::ModelSpec& m, const hw::Cluster& c, const TrainingConfig& t,
                                  const Reserves& r = {});
/// Bytes of model state per parameter for a precision recipe and optimizer, split in
/// {params, grads, optimizer states, extra weight copies}.
struct StateBytes {
  double params = 0, grads = 0, optimizer = 0, copies = 0;
  double total() const { return params + grads + optimizer + copies; }
};
StateBytes state_bytes_per_param(Precision p, Optimizer o);

/// In-flight micro-batches whose activations stage `stage` holds at its peak, as a multiple of
/// one micro-batch through the stage's layers (GPipe: all m; 1F1B: min(pp − stage, m);
/// interleaved: 1F1B's × (1 + (pp − 1)/(pp·v)) on stage 0).
double inflight_microbatches(const TrainingConfig& t, int stage);

/// One GPU of a serving replica holding `batch` sequences of `context` tokens.
MemoryLedger serving_memory(const model::ModelSpec& m, const hw::GpuSpec& g, const ServingConfig& s,
                            std::int64_t batch, std::int64_t context, const Reserves& r = {});
/// Weight bytes on one GPU of a replica.
double serving_weight_bytes_per_gpu(const model::ModelSpec& m, const ServingConfig& s);
/// KV bytes per token on one GPU of a replica (KV heads split by tp, replicated when tp > kv_heads;
/// layers split by pp).
double serving_kv_bytes_per_token_per_gpu(const model::ModelSpec& m, const ServingConfig& s);
/// Tokens of KV cache one replica can hold: (capacity × gpu_memory_utilization − weights −
/// workspace − reserves) / KV bytes per token; 0 when the weights alone do not fit.
std::int64_t serving_kv_capacity_tokens(const model::ModelSpec& m, const hw::GpuSpec& g,
                                        const ServingConfig& s, const Reserves& r = {});

}  // namespace infraplan::strat

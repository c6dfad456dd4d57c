#pragma once
// The training search space: every layout (tp, pp, dp, cp, ep, sp, ZeRO stage, micro-batch,
// recompute, pipeline schedule and virtual stages, precision) for a model on a cluster, and the
// first pruning pass (validity, then memory), with every rejected family counted by reason.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "model/model_spec.hpp"
#include "strategies/memory_ledger.hpp"
#include "strategies/training_config.hpp"

namespace infraplan::plan {

/// What the user asks for and allows.
struct TrainSearch {
  std::int64_t seq_len = 4096;
  std::int64_t global_batch = 0;  ///< sequences per iteration (required)
  std::vector<strat::Precision> precisions = {strat::Precision::BF16Mixed};
  std::vector<int> zero_stages = {0, 1, 2, 3};
  std::vector<std::int64_t> micro_batches = {1, 2, 4, 8};
  std::vector<model::Recompute> recompute = {model::Recompute::None, model::Recompute::Selective,
                                             model::Recompute::Full};
  int max_tp = 64, max_pp = 64, max_cp = 16;
  std::vector<int> virtual_stages = {2, 3, 4, 5, 6, 8};  ///< tried with the interleaved schedule
  bool include_gpipe = false;                            ///< GPipe is dominated by 1F1B in memory
  /// Zero-bubble schedules tried beside 1F1B and interleaved for pp > 1 (ZB-H1: 1F1B's memory,
  /// a third of its bubble; DualPipe: two stages per rank, needs m >= 2·pp).
  bool include_zero_bubble = true;
  /// HSDP: with ZeRO, also shard inside groups of dp_shard data-parallel ranks (powers of two
  /// from 2 below dp, on top of sharding over all of DP).
  bool include_hsdp = true;
  strat::Optimizer optimizer = strat::Optimizer::AdamW;
  /// The job's software, held fixed like the optimizer: every layout takes these keys of it (the
  /// framework's op list, the attention kernel, fused or unfused attention, host dispatch, DP
  /// gradient buckets, the MoE routing imbalance) and only them; the layout keys are searched.
  strat::TrainingConfig software;
};

/// Copies the software keys of TrainSearch::software into `layout` (see there).
void take_software(strat::TrainingConfig& layout, const strat::TrainingConfig& software);

/// A layout that passed validation and the memory check.
struct FeasibleLayout {
  strat::TrainingConfig cfg;
  double peak_bytes = 0;  ///< largest per-GPU ledger total over stages
  std::vector<std::string> warnings;
};

/// Counts of rejected layouts per reason ("does not fit: 93.1 GiB > 79.6 GiB").
struct Rejections {
  std::map<std::string, std::int64_t> counts;
  void add(const std::string& reason, std::int64_t n = 1) { counts[reason] += n; }
  std::int64_t total() const;
};

/// Enumerates the space, calling `visit` for every layout that validates and fits in memory;
/// rejected layouts are counted in `rejected` under a short reason family.
void enumerate_training(const model::ModelSpec& m, const hw::Cluster& c, const TrainSearch& s,
                        const std::function<void(FeasibleLayout&&)>& visit, Rejections& rejected);

}  // namespace infraplan::plan

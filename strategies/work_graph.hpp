#pragma once
// WorkGraph: one training iteration as a DAG of ops per rank ("lane"), each on one of the rank's
// streams (compute, TP, CP, EP, PP, DP, DP-gather). Built from the op templates of
// training_ops.hpp, the pipeline order of training_schedule.hpp and the bucketed data-parallel
// gradient synchronisation; executed by simulator/ (event-driven or on SimGrid).
//
// Two shapes of the same graph:
//  - symmetric (default): one lane per pipeline stage, the rank with tp = cp = dp = 0; every
//    other rank runs the same ops at the same times, so one pipeline stands for all. Collectives
//    keep their real rank groups, so their cost reflects the real topology.
//  - exact: one lane per GPU; a collective is one op per member joined by `join` (the executor
//    starts all members together when the last one is ready).
//
// Rank layout (Megatron order tp-cp-dp-pp): rank = tp + TP·(cp + CP·(dp + DP·pp)); expert
// parallelism is folded into dp×cp: EP groups are ep consecutive (cp, dp) indices.
#include <cstdint>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "hardware/cost_model.hpp"
#include "model/model_spec.hpp"
#include "strategies/training_config.hpp"
#include "strategies/training_ops.hpp"

namespace infraplan::strat {

/// Coordinates of a rank in the parallel layout.
struct RankCoord {
  int tp = 0, cp = 0, dp = 0, pp = 0;
};

/// Rank numbering and process groups for a resolved config.
class RankLayout {
 public:
  explicit RankLayout(const TrainingConfig& t) : t_(t) {}
  int rank(const RankCoord& c) const { return c.tp + t_.tp * (c.cp + t_.cp * (c.dp + t_.dp * c.pp)); }
  RankCoord coord(int rank) const;
  /// Ranks of `kind`'s group containing `rank` (CPNext/PPNext/PPPrev: {rank, peer}).
  std::vector<int> group(GroupKind kind, int rank) const;

 private:
  const TrainingConfig& t_;
};

/// One op instance.
struct Op {
  const char* name = "";  ///< static name from the template
  OpCategory category = OpCategory::Compute;
  Stream stream = Stream::Compute;
  int lane = 0;           ///< index into WorkGraph::lanes
  int layer = -1;         ///< global layer, -1 for embedding/head/optimizer/buckets
  int micro_batch = -1;
  bool forward = true;
  double seconds = 0;     ///< duration; comm ops are priced by the simulator (0 until then)
  double flops = 0;       ///< matmul FLOPs
  double bytes = 0;       ///< comm: nccl-tests size; memory-bound: HBM bytes
  CommOp comm = CommOp::AllReduce;
  int group = -1;         ///< index into WorkGraph::groups for comm ops
  int join = -1;          ///< exact mode: ops with the same join start together
  std::vector<int> deps;  ///< op ids that must finish first (same-stream order is implicit)
};

struct Lane {
  int rank = 0;   ///< global GPU rank
  int stage = 0;  ///< pipeline stage
  /// GPUs this lane stands for (tp·cp·dp in symmetric mode, 1 in exact mode).
  int represents = 1;
};

struct WorkGraphOptions {
  bool exact = false;                ///< one lane per GPU instead of one per pipeline stage
  double bucket_params = 40e6;       ///< DP gradient bucket size, parameters (Megatron default)
  bool cp_all_to_all = false;        ///< Ulysses-style context parallelism
};

struct WorkGraph {
  std::vector<Lane> lanes;
  std::vector<Op> ops;                     ///< in issue order per (lane, stream)
  std::vector<std::vector<int>> groups;    ///< rank groups of comm ops
  int joins = 0;                           ///< number of join ids used
  std::int64_t micro_batches = 0;
  bool exact = false;
  /// Model FLOPs of one iteration over the whole cluster (3 × forward, no recompute).
  double model_flops = 0;
  /// Matmul ops run this much slower while a communication op of their lane runs (the profile's
  /// measured contention; 1 = none).
  double comm_slowdown = 1;
};

/// Builds the graph of one iteration. `t` must be resolved (resolve_training).
WorkGraph build_work_graph(const model::ModelSpec& m, const hw::Cluster& c, const TrainingConfig& t,
                           const hw::CostModel& cost, const WorkGraphOptions& o = {});

}  // namespace infraplan::strat

#pragma once
// Which groups a cluster calibration measures, so that the sweeps expose the topology: groups
// inside a node (NVLink/NVSwitch) of 2, 4, ... and all local GPUs; groups across 2, 4, ... and
// all nodes with one GPU per node on the same rail (the local rank decides the NIC on rail-
// optimized clusters) and with every GPU of the nodes; and pairs across nodes on different rails.
// Disjoint groups of one phase run at the same time (each node's own intra group, each block of
// nodes), which gives a spread across nodes and loads the fabric as DP/TP groups do.
#include <cstddef>
#include <string>
#include <vector>

#include "calib_cluster/rank_facts.hpp"
#include "collectives/collective.hpp"
#include "hardware/cluster.hpp"

namespace infraplan::ccal {

struct SweepPhase {
  std::string name;                      ///< e.g. "intra-8", "inter-4-rail", "inter-2-full"
  std::string scope;                     ///< "intra" (one node) or "inter" (spans nodes)
  std::string placement;                 ///< "node", "one-per-node-rail", "full-nodes", "cross-rail-pair"
  int group_size = 0;                    ///< ranks per group
  int nodes_per_group = 1;               ///< nodes one group spans
  std::vector<std::vector<int>> groups;  ///< disjoint groups of world ranks (NCCL rank order)
  std::vector<coll::CollectiveOp> ops;   ///< ops swept on this phase
};

struct SweepOptions {
  std::vector<coll::CollectiveOp> ops = {coll::CollectiveOp::AllReduce, coll::CollectiveOp::AllGather,
                                         coll::CollectiveOp::ReduceScatter, coll::CollectiveOp::AllToAll,
                                         coll::CollectiveOp::SendRecv};
  std::size_t min_bytes = 8;                     ///< smallest size, bytes
  std::size_t max_bytes = std::size_t(4) << 30;  ///< largest size, bytes
  int size_factor = 2;                           ///< sizes grow by this factor
  int max_nodes = 0;                             ///< cap on nodes per inter-node group (0: all)
};

/// The phases for `layout` (ordered: intra by group size, then inter by nodes, then pairs). One
/// rank alone gets "intra-1" (NCCL's per-call cost and a local copy, no link).
std::vector<SweepPhase> plan_sweeps(const ClusterLayout& layout, const SweepOptions& opt);

/// min, min*factor, ... <= max.
std::vector<std::size_t> sweep_sizes(const SweepOptions& opt);

/// `bytes` rounded down to a multiple of 4·n (fp32 elements every rank splits evenly); 0 when
/// smaller than that.
std::size_t point_bytes(std::size_t bytes, int n);

/// Iterations timed at a size (nccl-tests: 20; 5 from 256 MiB) and warm-up calls before them.
int point_iterations(std::size_t bytes);
int point_warmup(std::size_t bytes);

/// A layout of `nodes` x `ranks_per_node` ranks, node-major (for plans and estimates before a run).
ClusterLayout regular_layout(int nodes, int ranks_per_node);

/// Expected seconds of the sweeps on `cluster` (the collective model's default constants: a
/// prediction, not a measurement): every call size's warm-up and timed calls of the slowest
/// group, plus `per_point_s` (the agreement between ranks) per size and `per_phase_s` (splitting
/// the communicators) per phase.
double expected_sweep_seconds(const hw::Cluster& cluster, const std::vector<SweepPhase>& phases,
                              const SweepOptions& opt, double per_point_s = 200e-6, double per_phase_s = 1.0);

}  // namespace infraplan::ccal

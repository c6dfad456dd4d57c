#pragma once
// Lowering a collective on a rank group into its algorithm's per-step flows: the plan both the
// analytical model (CommModel) and the flow simulation (FlowSim) execute.
//
// A plan is a list of phases run one after another; each phase repeats a flow pattern for a
// number of steps, every step moving `unit_bytes x fraction` on each flow of the pattern. Ring
// patterns are NCCL's multi-channel rings merged per edge: with p ranks on each of m nodes,
// channel c enters a node at local rank c+1 and leaves at local rank c (even nodes; odd nodes
// run the other way), so every node boundary of every channel stays on one rail, each GPU sends
// (p-1)/p of a chunk over NVLink and 1/p of it through its own NIC per step.
#include <vector>

#include "collectives/collective.hpp"
#include "collectives/comm_profile.hpp"
#include "collectives/fabric.hpp"

namespace infraplan::coll {

/// One flow of a pattern.
struct PatternFlow {
  int src = 0, dst = 0;  ///< GPU ranks on the cluster
  double fraction = 1;   ///< share of the step's unit bytes this flow carries
  double wire = 1;       ///< fraction / achieved efficiency of its links (bytes-equivalent)
  bool inter = false;    ///< crosses nodes
};

/// Flows that run at the same time in every step of a phase.
struct FlowPattern {
  std::vector<PatternFlow> flows;
};

/// A phase: `depth` steps of `pattern`, each step moving unit = coef x bytes on every flow; when
/// pipelined, the data is cut into P = ceil(coef x bytes / pipeline chunk) slices and the phase
/// takes depth + P - 1 steps of coef x bytes / P each.
struct PhaseTemplate {
  int pattern = 0;
  long long depth = 1;
  double coef = 1;
  bool pipelined = false;
  /// Steps among `depth` charged the intra-node hop latency although the pattern crosses nodes
  /// (a tree's chain inside each node: NCCL's 2((ppn-1) intra + log2(nodes) inter)).
  long long intra_depth = 0;
};

/// Everything about (op, algorithm) on a group that does not depend on the size.
struct GroupPlan {
  Algorithm algorithm = Algorithm::Ring;
  int latency_class = 0;  ///< row of CommProfile::latency: 0 ring/direct, 1 tree, 2 nvls
  std::vector<FlowPattern> patterns;
  std::vector<PhaseTemplate> phases;
};

/// Concrete phase for a given size.
struct Phase {
  int pattern = 0;
  long long steps = 0;
  double unit_bytes = 0;
  long long intra_steps = 0;  ///< steps charged the intra-node hop latency (see PhaseTemplate)
};
std::vector<Phase> phases_for(const GroupPlan& plan, double bytes, double pipeline_chunk_bytes);

/// Shape of a rank group on the cluster.
struct GroupShape {
  std::vector<int> sorted;                 ///< ranks by GPU id
  std::vector<std::vector<int>> per_node;  ///< ranks of each spanned node, in node order
  int n = 0, nodes = 0;
  int ppn = 0;  ///< ranks per node when uniform, else 0
};
GroupShape group_shape(const hw::Cluster& c, const std::vector<int>& ranks);

/// Algorithms that can run `op` on this group (first is the default when forced choices fail).
std::vector<Algorithm> candidate_algorithms(CollectiveOp op, const GroupShape& g, const hw::Cluster& c,
                                            const CommProfile& p);
/// The plan of `op` with `algo` on the group; throws infraplan::Error when the algorithm does not
/// apply (e.g. NVLS across nodes).
GroupPlan make_plan(CollectiveOp op, Algorithm algo, const GroupShape& g, const hw::Cluster& c,
                    const CommProfile& p, const std::vector<int>& given_order);

}  // namespace infraplan::coll

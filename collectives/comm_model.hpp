#pragma once
// The analytical collective model: time, algbw and busbw of a collective on a group of GPU ranks
// of a cluster, choosing algorithm and protocol like NCCL's tuner (minimum predicted time).
//
//   time = base latency(algorithm, protocol)
//        + sum over phases of steps x [ max over flows (route latency + unit x t_flow / eff_proto)
//                                       + max(0, hop latency(protocol, intra|inter) - route latency) ]
// where t_flow is the flow's max-min fair finish time per byte on the fabric (step_model.hpp)
// and unit the bytes each step moves (ring all-reduce: S/n over 2(n-1) steps). With
// CommProfile::ideal() this is exactly alpha-beta on the cluster's links, and it is what the
// SimGrid flow simulation reproduces when nothing else shares the links.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collectives/collective.hpp"
#include "collectives/comm_profile.hpp"
#include "collectives/fabric.hpp"
#include "collectives/schedule.hpp"
#include "collectives/step_model.hpp"

namespace infraplan::coll {

struct CollectiveEstimate {
  CollectiveOp op = CollectiveOp::AllReduce;
  int ranks = 0;          ///< group size n
  int nodes = 0;          ///< nodes the group spans
  double bytes = 0;       ///< nccl-tests size S, bytes
  double seconds = 0;     ///< predicted time, seconds
  double algbw_GBps = 0;  ///< S / time, 1e9 B/s (nccl-tests algbw)
  double busbw_GBps = 0;  ///< algbw x busbw_factor(op, n), 1e9 B/s (nccl-tests busbw)
  Algorithm algorithm = Algorithm::Ring;
  Protocol protocol = Protocol::Simple;
  std::string bottleneck;     ///< narrowest link of the slowest flow, e.g. "n0/nic3 up (50 GB/s)"
  double bytes_per_rank = 0;  ///< bytes the busiest rank sends with the chosen algorithm
};

/// A concrete lowering for the flow simulation: the plan, its phases for this size and the
/// per-step costs the analytical model uses.
struct LoweredCollective {
  GroupPlan plan;
  std::vector<Phase> phases;
  std::vector<const PatternCost*> costs;  ///< one per plan pattern (owned by the CommModel)
  Protocol protocol = Protocol::Simple;
  double protocol_efficiency = 1;  ///< divide unit bytes by this
  double base_latency_s = 0;       ///< once per collective
  double hop_latency_s_intra = 0;  ///< per step, intra-node patterns
  double hop_latency_s_inter = 0;  ///< per step, patterns crossing nodes
  double seconds = 0;              ///< analytical time
  /// Time of `steps` steps of phase `i`, seconds (analytical).
  double phase_seconds(std::size_t i, long long steps) const;
  /// Per-step software latency not covered by link latency for pattern `k` (intra: charged the
  /// intra-node hop latency).
  double hop_pad_s(int k, bool intra = false) const;
};

class CommModel {
 public:
  CommModel(const hw::Cluster& cluster, CommProfile profile = {});
  ~CommModel();
  CommModel(const CommModel&) = delete;
  CommModel& operator=(const CommModel&) = delete;

  const hw::Cluster& cluster() const { return fabric_.cluster(); }
  const net::Fabric& fabric() const { return fabric_; }
  const CommProfile& profile() const { return profile_; }

  /// Best (algorithm, protocol) for `op` of `bytes` (nccl-tests size) on `ranks` (GPU ranks of
  /// the cluster, 0-based; any order, no repeats). A matching profile fit wins over the model.
  /// Thread-safe; derived per-group quantities are cached.
  CollectiveEstimate estimate(CollectiveOp op, double bytes, const std::vector<int>& ranks) const;
  /// Same with a forced algorithm and protocol (throws infraplan::Error when it does not apply).
  CollectiveEstimate estimate(CollectiveOp op, double bytes, const std::vector<int>& ranks, Algorithm algo,
                              Protocol proto) const;
  /// The flows behind the model's choice (or the forced one), for the flow simulation.
  LoweredCollective lower(CollectiveOp op, double bytes, const std::vector<int>& ranks,
                          std::optional<Algorithm> algo = std::nullopt,
                          std::optional<Protocol> proto = std::nullopt) const;

 private:
  struct PlanEntry {
    GroupPlan plan;
    std::vector<PatternCost> costs;
    std::vector<std::string> bottleneck;  // per pattern: "link (bandwidth)"
  };
  struct GroupEntry {
    CollectiveOp op;
    std::vector<int> ranks;  // as given
    GroupShape shape;
    std::vector<Algorithm> algorithms;
    std::vector<std::unique_ptr<PlanEntry>> plans;  // parallel to algorithms
  };
  const GroupEntry& group(CollectiveOp op, const std::vector<int>& ranks) const;
  double plan_seconds(const GroupEntry& g, const PlanEntry& e, double bytes, Protocol p,
                      std::vector<Phase>* phases) const;
  CollectiveEstimate finish(CollectiveOp op, double bytes, const GroupEntry& g, const PlanEntry* e,
                            Protocol p, double seconds) const;

  net::Fabric fabric_;
  CommProfile profile_;
  mutable std::mutex mu_;
  /// Keyed by a hash of (op, ranks); entries compare the full key.
  mutable std::unordered_map<std::uint64_t, std::vector<std::unique_ptr<GroupEntry>>> cache_;
};

}  // namespace infraplan::coll

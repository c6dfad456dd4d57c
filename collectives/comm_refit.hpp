#pragma once
// Refits the collective model's terms from calibration sweeps (measured NCCL times per op, group
// and size): the link efficiency each collective reaches per protocol and scope, and the
// small-message latency per group size. The refit changes terms, not structure: the plans (ring,
// tree, direct), the tuner's choice of algorithm and protocol and the fabric stay, so a refitted
// profile also answers group sizes and placements that were not measured.
//
// Method (deterministic, per op and scope):
//  1. Latency: for every measured group size, the calls of at most `latency_bound_max_bytes`
//     give the median of (measured - modelled) time; that is the group's `extra_us`
//     (CommProfile::latency_fits), added to every protocol's base latency.
//  2. Simple: the efficiency that minimises the sum of |log(modelled / measured)| over the calls
//     of at least `bandwidth_bound_min_bytes`, with the tuner restricted to Simple.
//  3. LL128, then LL: the same over the calls in between, with every protocol enabled (the tuner
//     takes the fastest, as NCCL's does), each at most its wire format's share of the fitted
//     Simple efficiency (the default ratios: LL 0.5, LL128 0.92). Steps 1-3 run twice.
// A robust (L1 in log time) objective: one outlying size moves the fit little.
#include <string>
#include <vector>

#include "collectives/comm_profile.hpp"
#include "hardware/cluster.hpp"

namespace infraplan::coll {

/// One measured call: `op` of `bytes` (nccl-tests size) on the cluster GPU ranks `ranks`
/// (their placement decides the scope and the links), taking `seconds` (nccl-tests time: the
/// mean over the group's ranks of the per-call time).
struct MeasuredCollective {
  CollectiveOp op = CollectiveOp::AllReduce;
  std::vector<int> ranks;
  double bytes = 0;
  double seconds = 0;
};

struct RefitOptions {
  double latency_bound_max_bytes = 4096;                ///< calls up to this size give the latency
  double bandwidth_bound_min_bytes = 64.0 * (1 << 20);  ///< calls from this size fit Simple
  double min_efficiency = 0.05;                         ///< search range of an efficiency
  double max_efficiency = 1.5;
};

/// What the refit found for one op and scope (for reports).
struct RefitSummary {
  CollectiveOp op = CollectiveOp::AllReduce;
  bool inter = false;
  int points = 0;                          ///< measured calls used
  double efficiency[3] = {0, 0, 0};        ///< LL, LL128, Simple: fraction of nominal link bandwidth
  bool fitted[3] = {false, false, false};  ///< whether the calls constrained that protocol
  double median_abs_error = 0;             ///< in-sample median |modelled / measured - 1|
};

struct RefitResult {
  CommProfile profile;  ///< `base` with link_efficiency and latency_fits set
  std::vector<RefitSummary> summary;
};

/// Refits `base` on `cluster` from `rows`. Ops and scopes without rows keep their terms. Throws
/// infraplan::Error when a row's ranks are outside the cluster, repeat, or number fewer than 2.
RefitResult refit_comm_profile(const hw::Cluster& cluster, const CommProfile& base,
                               const std::vector<MeasuredCollective>& rows, const RefitOptions& opt = {});

/// The model's time for each row (same order), seconds.
std::vector<double> model_seconds(const hw::Cluster& cluster, const CommProfile& profile,
                                  const std::vector<MeasuredCollective>& rows);

}  // namespace infraplan::coll

#pragma once
// Latency and efficiency constants of the collective model, with documented defaults, and the
// measured fits that replace them when a calibrated profile has a `comm` section.
//
// Time of one algorithm step (NCCL's tuning model, src/graph/tuning.cc): the step's latency is
// max(per-hop latency of the protocol, latency of the links the step's flows cross), and its
// bandwidth term is the step's bytes over the links' bandwidth x efficiency. A collective adds
// one base latency per launch.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "collectives/collective.hpp"
#include "common/json_util.hpp"

namespace infraplan::coll {

/// One measured fit: time(bytes) = latency_us + bytes * busbw_factor / (bw_GBps * 1e9)
/// for `op` on a group of `ranks` ranks that stays inside one node ("intra") or spans nodes
/// ("inter"). `bw_GBps` is the fitted bus bandwidth (nccl-tests busbw), 1e9 B/s.
struct CommFit {
  CollectiveOp op = CollectiveOp::AllReduce;
  int ranks = 0;          ///< group size the fit was measured with
  bool inter = false;     ///< true: "scope": "inter" (group spans nodes)
  double latency_us = 0;  ///< fitted latency, microseconds
  double bw_GBps = 0;     ///< fitted bus bandwidth, 1e9 B/s
};

/// A link efficiency refitted from calibration sweeps (collectives/comm_refit.hpp): the fraction
/// of the links' nominal bandwidth that `op` reaches with `protocol` on groups inside one node
/// (`inter` false) or spanning nodes (`inter` true). Replaces link efficiency x protocol
/// efficiency for that op, protocol and scope.
struct LinkEfficiencyFit {
  CollectiveOp op = CollectiveOp::AllReduce;
  Protocol protocol = Protocol::Simple;
  bool inter = false;
  double efficiency = 0;  ///< fraction of nominal link bandwidth, (0, 1.5]
};

/// Small-message latency refitted from calibration sweeps for `op` on groups of `ranks` ranks of
/// one scope: the measured time of the smallest calls, and what the default latency table lacks
/// of it. Group sizes between two fits interpolate `extra_us` linearly in log2(ranks); beyond the
/// fitted sizes the nearest one applies.
struct LatencyFit {
  CollectiveOp op = CollectiveOp::AllReduce;
  bool inter = false;
  int ranks = 0;           ///< group size the latency was measured on
  double latency_us = 0;   ///< median measured time of calls <= 4 KiB, microseconds
  double extra_us = 0;     ///< added to every protocol's base latency (may be negative), microseconds
};

/// Per-(algorithm, protocol) latencies in microseconds (NCCL tuning.cc, 2.2x).
struct ProtoLatency {
  double base_us = 0;       ///< once per collective launch
  double intra_hop_us = 0;  ///< per step whose flows stay inside nodes (NVLink/PCIe)
  double inter_hop_us = 0;  ///< per step where some flow crosses the network
};

struct CommProfile {
  /// Indexed [algorithm: 0 ring/chain/direct, 1 tree, 2 nvls][protocol: LL, LL128, Simple].
  /// Defaults: NCCL base latencies Ring 6.6/14/8.4 us, Tree 6.8/14/8.4; per NVLink hop Ring
  /// 0.6/1.9/3.4, Tree 0.6/1.25/4.0; per network hop Ring 2.7/4.0/14, Tree 5.0/8.5/14; NVLS
  /// (Simple only) 25 us base, 0.6 us per step (order of magnitude from NCCL's tuning table).
  std::array<std::array<ProtoLatency, 3>, 3> latency{};
  /// Fraction of link bandwidth each protocol reaches (LL: 8 data bytes per 16 on the wire;
  /// LL128: 120 of 128, NCCL uses 0.92; Simple: 1).
  std::array<double, 3> protocol_efficiency{0.5, 0.92, 1.0};
  /// Which protocols the tuner may choose (LL, LL128, Simple).
  std::array<bool, 3> protocol_enabled{true, true, true};
  /// Achieved fraction of nominal NVLink/PCIe bandwidth (nccl-tests on NVSwitch H100 nodes reach
  /// ~360 of 450 GB/s ring busbw: 0.80).
  double intra_bw_efficiency = 0.80;
  /// Achieved fraction of nominal NIC bandwidth (IB NDR ~46 of 50 GB/s per NIC: 0.92).
  double inter_bw_efficiency = 0.92;
  /// NVLS (NVSwitch multicast + in-switch reduction) allowed for single-node AllReduce on
  /// NVSwitch nodes. Its traffic per GPU is S out and S in (vs 2(n-1)/n S for ring).
  bool nvls_enabled = true;
  /// Extra efficiency of NVLS on top of intra_bw_efficiency (multicast overhead; NCCL reports
  /// ~480 GB/s busbw on H100 where the ideal is 2(n-1)/n x 450 = 787: 0.75 of it with 0.8 above).
  double nvls_efficiency = 0.75;
  /// Pipeline slice for chains and trees (Broadcast, Reduce, Tree AllReduce), bytes.
  double pipeline_chunk_bytes = 1 << 20;
  /// Measured fits from a calibration run; used instead of the model when they match.
  std::vector<CommFit> fits;
  /// Refitted model terms (comm.model in a profile, collectives/comm_refit.hpp): they change the
  /// model itself, so they apply to every group size and placement of their scope.
  std::vector<LinkEfficiencyFit> link_efficiency;
  std::vector<LatencyFit> latency_fits;

  CommProfile();
  /// Pure alpha-beta: no software latency, efficiencies 1, Simple protocol only, NVLS off. The
  /// link latencies and bandwidths of the cluster are all that remains.
  static CommProfile ideal();
  /// Reads the `comm` section of a profile JSON (the whole profile or the section itself):
  /// {"fits": [{"op","ranks","scope","latency_us","bw_GBps"}], "rows": [...],
  ///  optional overrides "intra_bw_efficiency", "inter_bw_efficiency", "nvls_enabled",
  ///  "nvls_efficiency", "pipeline_chunk_bytes"}. Missing section: defaults.
  static CommProfile from_json(const Json& j, const std::string& path = "profile");
  /// The fit measured for (op, n ranks, scope), if any (fits of other group sizes don't apply).
  /// Not used when the profile carries refitted model terms (`link_efficiency`): the refitted
  /// model then answers every group.
  std::optional<CommFit> find_fit(CollectiveOp op, int n, bool inter) const;
  /// Bandwidth efficiency the model divides a step's bytes by for (op, protocol, scope): the
  /// refitted link efficiency over the scope's link efficiency when one was fitted, else the
  /// protocol's efficiency.
  double step_efficiency(CollectiveOp op, Protocol p, bool inter) const;
  /// Latency added to the base latency of every protocol for `op` on `n` ranks of a scope,
  /// microseconds (0 without latency fits for that op and scope).
  double extra_latency_us(CollectiveOp op, int n, bool inter) const;
  /// The `model` object of a profile's comm section for the refitted terms (empty when none).
  Json refit_json() const;
  const ProtoLatency& lat(int algo_class, Protocol p) const { return latency[algo_class][int(p)]; }
};

}  // namespace infraplan::coll

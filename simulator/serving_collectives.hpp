#pragma once
// Adapters from the collectives library's analytical model (collectives/comm_model.hpp: NCCL-like
// algorithm and protocol choice on the cluster's fabric) to the serving simulator's interfaces:
// the TP all-reduce inside a step and the PD KV transfer between instances.
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "collectives/comm_model.hpp"
#include "simulator/execution_backend.hpp"
#include "simulator/serving_kv_transfer.hpp"

namespace infraplan::sim::serve {

/// All-reduce over GPU ranks 0..n−1 of the cluster (one node for n ≤ GPUs per node): every
/// replica's TP group has that shape. Memoised by (bytes, n).
class CollectivesTpComm final : public TpCommModel {
 public:
  explicit CollectivesTpComm(const coll::CommModel& m) : m_(m) {}
  double all_reduce_seconds(double bytes, int ranks) const override;

 private:
  const coll::CommModel& m_;
  mutable std::mutex mu_;
  mutable std::map<std::pair<double, int>, double> cache_;
};

/// KV transfer as parallel send/recv flows, one per lane i < max(|src|, |dst|) from
/// src[i mod |src|] to dst[i mod |dst|] (each decode rank receives the heads it owns), each
/// priced by the collectives model on the real route (NVLink inside a node, NIC rails between
/// nodes); the slowest lane sets the time.
class CollectivesKvTransfer final : public KvTransferModel {
 public:
  explicit CollectivesKvTransfer(const coll::CommModel& m) : m_(m) {}
  double transfer_seconds(const std::vector<int>& src, const std::vector<int>& dst,
                          double bytes) const override;
  const char* link_name(const std::vector<int>& src, const std::vector<int>& dst) const override;

 private:
  const coll::CommModel& m_;
};

/// One KV transfer of a simulation run.
struct KvTransferRecord {
  std::int64_t request = 0;
  double start_s = 0;         ///< when it started (sender and receiver ready), seconds
  std::vector<int> src, dst;  ///< GPU ranks, one lane per pair
  double bytes = 0;           ///< whole KV of the prompt
};

/// Re-times `transfers` as concurrent flows on the SimGrid model of `cluster` (each lane one
/// flow of bytes / lanes, released at its start time, links shared max-min fairly). Returns the
/// duration of each transfer, seconds, in the same order.
std::vector<double> simgrid_kv_durations(const hw::Cluster& cluster,
                                         const std::vector<KvTransferRecord>& transfers);

}  // namespace infraplan::sim::serve

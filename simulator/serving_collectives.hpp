#pragma once
// Adapters from the collectives library's analytical model (collectives/comm_model.hpp: NCCL-like
// algorithm and protocol choice on the cluster's fabric) to the serving simulator's interfaces:
// the TP all-reduce inside a step and the PD KV transfer between instances.
#include <map>
#include <memory>
#include <mutex>
#include <utility>

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

/// KV transfer as parallel send/recv flows, one per TP lane (src[i] → dst[i]), each priced by
/// the collectives model on the real route (NVLink inside a node, the NIC rails between nodes).
class CollectivesKvTransfer final : public KvTransferModel {
 public:
  explicit CollectivesKvTransfer(const coll::CommModel& m) : m_(m) {}
  double transfer_seconds(const std::vector<int>& src, const std::vector<int>& dst, double bytes) const override;
  const char* link_name(const std::vector<int>& src, const std::vector<int>& dst) const override;

 private:
  const coll::CommModel& m_;
};

}  // namespace infraplan::sim::serve

#pragma once
// KV-cache transfer between a prefill instance and a decode instance (PD disaggregation).
// The KV moves in max(prefill TP, decode TP) parallel lanes (lane i: prefill rank i mod P to
// decode rank i mod D), over
// NVLink/NVSwitch inside a node or the NICs between nodes. The collectives library's flow
// engine can implement the same interface with contention on the real topology.
#include <vector>

#include "hardware/cluster.hpp"

namespace infraplan::sim::serve {

class KvTransferModel {
 public:
  virtual ~KvTransferModel() = default;
  /// Seconds to move `bytes` of KV (whole sequence, all layers) from GPU ranks `src` to `dst`.
  virtual double transfer_seconds(const std::vector<int>& src, const std::vector<int>& dst,
                                  double bytes) const = 0;
  /// "nvlink" or "ib"/"roce": the link class the transfer uses (for reports).
  virtual const char* link_name(const std::vector<int>& src, const std::vector<int>& dst) const = 0;
};

/// Bandwidth × parallel lanes + latency from the cluster description: intra-node transfers at
/// the GPU interconnect's per-GPU bandwidth, inter-node ones at each GPU's share of the NICs;
/// `efficiency` is the fraction of link bandwidth a transfer achieves.
class ClusterKvTransfer final : public KvTransferModel {
 public:
  explicit ClusterKvTransfer(const hw::Cluster& c, double efficiency = 0.8) : c_(c), eff_(efficiency) {}
  double transfer_seconds(const std::vector<int>& src, const std::vector<int>& dst,
                          double bytes) const override;
  const char* link_name(const std::vector<int>& src, const std::vector<int>& dst) const override;

 private:
  bool same_node(const std::vector<int>& src, const std::vector<int>& dst) const;
  hw::Cluster c_;
  double eff_;
};

}  // namespace infraplan::sim::serve

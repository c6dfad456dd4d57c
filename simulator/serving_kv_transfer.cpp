#include "simulator/serving_kv_transfer.hpp"

#include <algorithm>

namespace infraplan::sim::serve {

bool ClusterKvTransfer::same_node(const std::vector<int>& src, const std::vector<int>& dst) const {
  const std::size_t lanes = std::max(src.size(), dst.size());
  for (std::size_t i = 0; i < lanes; ++i)
    if (c_.node_of(src[i % src.size()]) != c_.node_of(dst[i % dst.size()])) return false;
  return true;
}

double ClusterKvTransfer::transfer_seconds(const std::vector<int>& src, const std::vector<int>& dst,
                                           double bytes) const {
  if (src.empty() || dst.empty() || bytes <= 0) return 0;
  const double lanes = double(std::max(src.size(), dst.size()));
  if (same_node(src, dst))
    return c_.nvlink_latency_us * 1e-6 + bytes / (lanes * c_.intra_GBps() * 1e9 * eff_);
  return c_.inter.latency_us * 1e-6 + bytes / (lanes * c_.inter_GBps_per_gpu() * 1e9 * eff_);
}

const char* ClusterKvTransfer::link_name(const std::vector<int>& src, const std::vector<int>& dst) const {
  if (same_node(src, dst)) return c_.intra.kind == hw::IntraKind::PCIe ? "pcie" : "nvlink";
  return hw::inter_kind_name(c_.inter.kind);
}

}  // namespace infraplan::sim::serve

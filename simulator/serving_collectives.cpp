#include "simulator/serving_collectives.hpp"

#include <algorithm>

namespace infraplan::sim::serve {

double CollectivesTpComm::all_reduce_seconds(double bytes, int n) const {
  if (n <= 1 || bytes <= 0) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  auto key = std::make_pair(bytes, n);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  std::vector<int> ranks(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ranks[std::size_t(i)] = i;
  const double t = m_.estimate(coll::CollectiveOp::AllReduce, bytes, ranks).seconds;
  cache_.emplace(key, t);
  return t;
}

double CollectivesKvTransfer::transfer_seconds(const std::vector<int>& src, const std::vector<int>& dst,
                                               double bytes) const {
  if (src.empty() || dst.empty() || bytes <= 0) return 0;
  const std::size_t lanes = std::min(src.size(), dst.size());
  double t = 0;
  for (std::size_t i = 0; i < lanes; ++i)
    t = std::max(t, m_.estimate(coll::CollectiveOp::SendRecv, bytes / double(lanes), {src[i], dst[i]}).seconds);
  return t;
}

const char* CollectivesKvTransfer::link_name(const std::vector<int>& src, const std::vector<int>& dst) const {
  const auto& c = m_.cluster();
  const bool same = c.node_of(src.front()) == c.node_of(dst.front());
  if (same) return c.intra.kind == hw::IntraKind::PCIe ? "pcie" : "nvlink";
  return hw::inter_kind_name(c.inter.kind);
}

}  // namespace infraplan::sim::serve

#include "simulator/serving_collectives.hpp"

#include <algorithm>
#include <string>

#include "collectives/flow_sim.hpp"

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
  const std::size_t lanes = std::max(src.size(), dst.size());
  double t = 0;
  for (std::size_t i = 0; i < lanes; ++i) {
    const int a = src[i % src.size()], b = dst[i % dst.size()];
    if (a == b) continue;
    t = std::max(t, m_.estimate(coll::CollectiveOp::SendRecv, bytes / double(lanes), {a, b}).seconds);
  }
  return t;
}

const char* CollectivesKvTransfer::link_name(const std::vector<int>& src, const std::vector<int>& dst) const {
  const auto& c = m_.cluster();
  const std::size_t lanes = std::max(src.size(), dst.size());
  for (std::size_t i = 0; i < lanes; ++i)
    if (c.node_of(src[i % src.size()]) != c.node_of(dst[i % dst.size()]))
      return hw::inter_kind_name(c.inter.kind);
  return c.intra.kind == hw::IntraKind::PCIe ? "pcie" : "nvlink";
}

std::vector<double> simgrid_kv_durations(const hw::Cluster& cluster,
                                         const std::vector<KvTransferRecord>& transfers) {
  std::vector<double> out(transfers.size(), 0);
  if (transfers.empty()) return out;
  coll::FlowSim sim(cluster);
  std::vector<std::vector<coll::TaskId>> lanes(transfers.size());
  for (std::size_t k = 0; k < transfers.size(); ++k) {
    const auto& t = transfers[k];
    const std::string stream = "kv" + std::to_string(k);
    // A delay on its own stream releases the flows at the transfer's start time.
    const coll::TaskId clock = sim.add_compute(t.src.front(), t.start_s, {}, stream + "/clock");
    const std::size_t n = std::max(t.src.size(), t.dst.size());
    for (std::size_t i = 0; i < n; ++i) {
      const int a = t.src[i % t.src.size()], b = t.dst[i % t.dst.size()];
      if (a != b) lanes[k].push_back(sim.add_transfer(a, b, t.bytes / double(n), {clock}, stream));
    }
  }
  const coll::SimResult r = sim.run();
  for (std::size_t k = 0; k < transfers.size(); ++k) {
    double end = transfers[k].start_s;
    for (coll::TaskId id : lanes[k]) end = std::max(end, r.tasks[std::size_t(id)].end_s);
    out[k] = end - transfers[k].start_s;
  }
  return out;
}

}  // namespace infraplan::sim::serve

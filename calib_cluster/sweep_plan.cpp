#include "calib_cluster/sweep_plan.hpp"

#include <algorithm>

#include "collectives/comm_model.hpp"
#include "common/error.hpp"

namespace infraplan::ccal {

using coll::CollectiveOp;

namespace {

/// 2, 4, 8, ... below `n`, then `n` itself (nothing when n < 2).
std::vector<int> group_sizes(int n) {
  std::vector<int> out;
  for (int g = 2; g < n; g *= 2) out.push_back(g);
  if (n >= 2) out.push_back(n);
  return out;
}

}  // namespace

std::vector<SweepPhase> plan_sweeps(const ClusterLayout& L, const SweepOptions& opt) {
  if (opt.ops.empty()) throw Error("--ops: no collective to sweep");
  std::vector<SweepPhase> out;
  const int ppn = L.ranks_per_node, nodes = L.nodes();
  if (ppn == 1 && nodes == 1) {
    // One GPU: NCCL's per-call cost and a local copy (no link is measured; fits of one rank are
    // kept out of the model), so that a one-GPU run still exercises the whole path.
    SweepPhase p;
    p.name = "intra-1";
    p.scope = "intra";
    p.placement = "node";
    p.group_size = 1;
    p.ops = opt.ops;
    p.groups = {{L.node_ranks[0][0]}};
    out.push_back(p);
    return out;
  }
  for (int g : group_sizes(ppn)) {
    SweepPhase p;
    p.name = "intra-" + std::to_string(g);
    p.scope = "intra";
    p.placement = "node";
    p.group_size = g;
    p.ops = opt.ops;
    for (const auto& nr : L.node_ranks) p.groups.emplace_back(nr.begin(), nr.begin() + g);
    out.push_back(p);
  }
  const int max_nodes = opt.max_nodes > 0 ? std::min(opt.max_nodes, nodes) : nodes;
  for (int k : group_sizes(max_nodes)) {
    // One GPU per node, local rank 0 of each: the same rail on a rail-optimized fabric.
    SweepPhase rail;
    rail.name = "inter-" + std::to_string(k) + "-rail";
    rail.scope = "inter";
    rail.placement = "one-per-node-rail";
    rail.group_size = k;
    rail.nodes_per_group = k;
    rail.ops = opt.ops;
    for (int b = 0; b + k <= nodes; b += k) {
      std::vector<int> grp;
      for (int n = b; n < b + k; ++n) grp.push_back(L.node_ranks[std::size_t(n)].front());
      rail.groups.push_back(grp);
    }
    out.push_back(rail);
    if (ppn < 2) continue;
    // Every GPU of k nodes, node-major (NCCL builds its rings across the nodes from this order).
    SweepPhase full = rail;
    full.name = "inter-" + std::to_string(k) + "-full";
    full.placement = "full-nodes";
    full.group_size = k * ppn;
    full.groups.clear();
    for (int b = 0; b + k <= nodes; b += k) {
      std::vector<int> grp;
      for (int n = b; n < b + k; ++n)
        grp.insert(grp.end(), L.node_ranks[std::size_t(n)].begin(), L.node_ranks[std::size_t(n)].end());
      full.groups.push_back(grp);
    }
    out.push_back(full);
  }
  if (nodes >= 2 && ppn >= 2) {
    // Pairs across nodes on different rails: local rank 0 of node 2i with local rank 1 of node 2i+1.
    SweepPhase cross;
    cross.name = "inter-2-cross-rail";
    cross.scope = "inter";
    cross.placement = "cross-rail-pair";
    cross.group_size = 2;
    cross.nodes_per_group = 2;
    for (CollectiveOp op : {CollectiveOp::SendRecv, CollectiveOp::AllReduce})
      if (std::find(opt.ops.begin(), opt.ops.end(), op) != opt.ops.end()) cross.ops.push_back(op);
    for (int b = 0; b + 2 <= nodes; b += 2)
      cross.groups.push_back({L.node_ranks[std::size_t(b)][0], L.node_ranks[std::size_t(b + 1)][1]});
    if (!cross.ops.empty()) out.push_back(cross);
  }
  return out;
}

std::vector<std::size_t> sweep_sizes(const SweepOptions& opt) {
  if (opt.min_bytes < 1 || opt.max_bytes < opt.min_bytes)
    throw Error("sizes: --min-bytes=" + std::to_string(opt.min_bytes) +
                " and --max-bytes=" + std::to_string(opt.max_bytes) + " must satisfy 1 <= min <= max");
  if (opt.size_factor < 2) throw Error("sizes: the factor between sizes must be >= 2");
  std::vector<std::size_t> out;
  for (std::size_t b = opt.min_bytes; b <= opt.max_bytes; b *= std::size_t(opt.size_factor)) {
    out.push_back(b);
    if (b > opt.max_bytes / std::size_t(opt.size_factor)) break;
  }
  return out;
}

std::size_t point_bytes(std::size_t bytes, int n) {
  const std::size_t unit = 4 * std::size_t(std::max(n, 1));
  return bytes / unit * unit;
}

int point_iterations(std::size_t bytes) { return bytes >= (std::size_t(256) << 20) ? 5 : 20; }
int point_warmup(std::size_t bytes) { return bytes >= (std::size_t(256) << 20) ? 1 : 2; }

ClusterLayout regular_layout(int nodes, int ranks_per_node) {
  ClusterLayout L;
  for (int n = 0; n < nodes; ++n) {
    L.hosts.push_back("node" + std::to_string(n));
    std::vector<int> r;
    for (int k = 0; k < ranks_per_node; ++k) r.push_back(n * ranks_per_node + k);
    L.node_ranks.push_back(r);
  }
  L.ranks_per_node = ranks_per_node;
  return L;
}

double expected_sweep_seconds(const hw::Cluster& cluster, const std::vector<SweepPhase>& phases,
                              const SweepOptions& opt, double per_point_s, double per_phase_s) {
  const coll::CommModel model(cluster);
  const auto sizes = sweep_sizes(opt);
  double total = 0;
  for (const auto& ph : phases) {
    total += per_phase_s;
    for (auto op : ph.ops) {
      std::size_t last = 0;
      for (std::size_t size : sizes) {
        const std::size_t b = point_bytes(size, ph.group_size);
        if (b == 0 || b == last) continue;
        last = b;
        double slowest = 0;
        for (const auto& g : ph.groups) slowest = std::max(slowest, model.estimate(op, double(b), g).seconds);
        total += slowest * (point_warmup(b) + point_iterations(b)) + per_point_s;
      }
    }
  }
  return total;
}

}  // namespace infraplan::ccal

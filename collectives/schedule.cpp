#include "collectives/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/error.hpp"

namespace infraplan::coll {

std::vector<Phase> phases_for(const GroupPlan& plan, double bytes, double pipeline_chunk_bytes) {
  std::vector<Phase> out;
  out.reserve(plan.phases.size());
  for (const auto& t : plan.phases) {
    const double data = t.coef * bytes;
    if (t.pipelined) {
      // The first slice fills the pipeline (depth steps, each paying its hop's latency); the
      // slices behind it stream at the bandwidth (NCCL keeps several in flight): one step of the
      // rest of the data.
      const double slices = std::max(1.0, std::ceil(data / pipeline_chunk_bytes));
      out.push_back({t.pattern, t.depth, data / slices, t.intra_depth});
      if (slices > 1) out.push_back({t.pattern, 1, data / slices * (slices - 1), 0});
    } else {
      out.push_back({t.pattern, t.depth, data, t.intra_depth});
    }
  }
  return out;
}

GroupShape group_shape(const hw::Cluster& c, const std::vector<int>& ranks) {
  GroupShape g;
  g.sorted = ranks;
  std::sort(g.sorted.begin(), g.sorted.end());
  for (std::size_t i = 0; i < g.sorted.size(); ++i) {
    const int r = g.sorted[i];
    if (r < 0 || r >= c.total_gpus())
      throw Error("group rank " + std::to_string(r) + " is outside the cluster (0.." +
                  std::to_string(c.total_gpus() - 1) + ")");
    if (i > 0 && g.sorted[i - 1] == r) throw Error("group lists rank " + std::to_string(r) + " twice");
  }
  g.n = int(g.sorted.size());
  int last_node = -1;
  for (int r : g.sorted) {
    if (c.node_of(r) != last_node) {
      g.per_node.emplace_back();
      last_node = c.node_of(r);
    }
    g.per_node.back().push_back(r);
  }
  g.nodes = int(g.per_node.size());
  g.ppn = g.n > 0 ? int(g.per_node[0].size()) : 0;
  for (const auto& v : g.per_node)
    if (int(v.size()) != g.ppn) g.ppn = 0;
  return g;
}

namespace {

struct Builder {
  const hw::Cluster& c;
  const CommProfile& p;
  double extra_efficiency = 1;  // NVLS multicast overhead

  void add(FlowPattern& pat, int src, int dst, double fraction) const {
    if (src == dst || fraction <= 0) return;
    PatternFlow f;
    f.src = src;
    f.dst = dst;
    f.fraction = fraction;
    f.inter = c.node_of(src) != c.node_of(dst);
    f.wire = fraction / ((f.inter ? p.inter_bw_efficiency : p.intra_bw_efficiency) * extra_efficiency);
    pat.flows.push_back(f);
  }
};

/// The merged multi-channel ring (see schedule.hpp).
FlowPattern ring_pattern(const Builder& b, const GroupShape& g) {
  FlowPattern pat;
  if (g.n < 2) return pat;
  const int m = g.nodes;
  if (m == 1 || g.ppn == 0) {
    for (int i = 0; i < g.n; ++i)
      b.add(pat, g.sorted[std::size_t(i)], g.sorted[std::size_t((i + 1) % g.n)], 1.0);
    return pat;
  }
  const int ppn = g.ppn;
  const double intra = double(ppn - 1) / ppn, cross = 1.0 / ppn;
  for (int i = 0; i < m; ++i) {
    const auto& L = g.per_node[std::size_t(i)];
    const auto& N = g.per_node[std::size_t((i + 1) % m)];
    const bool even = i % 2 == 0;
    for (int j = 0; j < ppn; ++j) {
      const int next = even ? (j + 1) % ppn : (j + ppn - 1) % ppn;
      if (ppn > 1) b.add(pat, L[std::size_t(j)], L[std::size_t(next)], intra);
    }
    // Channel ch leaves an even node at local ch and an odd node at local ch+1, and enters an
    // odd node at local ch and an even node at local ch+1: the same rail on every boundary,
    // except from an even last node (m odd) into node 0.
    for (int ch = 0; ch < ppn; ++ch) {
      const int exit_local = even ? ch : (ch + 1) % ppn;
      const bool next_even = (i + 1) % m % 2 == 0;
      const int entry_local = next_even ? (ch + 1) % ppn : ch;
      b.add(pat, L[std::size_t(exit_local)], N[std::size_t(entry_local)], cross);
    }
  }
  return pat;
}

/// One ring per node over its local ranks (hierarchical intra phases).
FlowPattern intra_rings(const Builder& b, const GroupShape& g) {
  FlowPattern pat;
  for (const auto& L : g.per_node)
    for (std::size_t j = 0; j < L.size(); ++j) b.add(pat, L[j], L[(j + 1) % L.size()], 1.0);
  return pat;
}

/// One ring per local index across nodes (hierarchical inter phase).
FlowPattern rail_rings(const Builder& b, const GroupShape& g) {
  FlowPattern pat;
  const int m = g.nodes;
  for (int j = 0; j < g.ppn; ++j)
    for (int i = 0; i < m; ++i)
      b.add(pat, g.per_node[std::size_t(i)][std::size_t(j)],
            g.per_node[std::size_t((i + 1) % m)][std::size_t(j)], 1.0);
  return pat;
}

int ceil_log2(int x) {
  int d = 0;
  while ((1 << d) < x) ++d;
  return d;
}

/// Double binary tree across nodes (tree A on each node's first rank, tree B, mirrored, on its
/// last rank, half the data each) with a chain inside each node; both directions of every edge
/// are active in a pipelined step (reduce going up while broadcast comes down).
FlowPattern tree_pattern(const Builder& b, const GroupShape& g) {
  FlowPattern pat;
  for (const auto& L : g.per_node)
    for (std::size_t j = 0; j + 1 < L.size(); ++j) {
      b.add(pat, L[j], L[j + 1], 1.0);
      b.add(pat, L[j + 1], L[j], 1.0);
    }
  const int m = g.nodes;
  for (int i = 1; i < m; ++i) {
    const int parent = (i - 1) / 2;
    const int a = g.per_node[std::size_t(i)].front(), pa = g.per_node[std::size_t(parent)].front();
    b.add(pat, a, pa, 0.5);
    b.add(pat, pa, a, 0.5);
    const int bi = m - 1 - i, bp = m - 1 - parent;
    const int x = g.per_node[std::size_t(bi)].back(), px = g.per_node[std::size_t(bp)].back();
    b.add(pat, x, px, 0.5);
    b.add(pat, px, x, 0.5);
  }
  return pat;
}

}  // namespace

std::vector<Algorithm> candidate_algorithms(CollectiveOp op, const GroupShape& g, const hw::Cluster& c,
                                            const CommProfile& p) {
  switch (op) {
    case CollectiveOp::AllReduce: {
      std::vector<Algorithm> a{Algorithm::Ring};
      if (g.nodes > 1) a.push_back(Algorithm::Tree);
      if (g.nodes > 1 && g.ppn > 1) a.push_back(Algorithm::Hierarchical);
      if (g.nodes == 1 && g.n > 2 && p.nvls_enabled && c.intra.kind == hw::IntraKind::NVSwitch &&
          c.gpu.compute_capability >= 90)
        a.push_back(Algorithm::NVLS);
      return a;
    }
    case CollectiveOp::AllToAll:
    case CollectiveOp::SendRecv:
      return {Algorithm::Direct};
    default:
      return {Algorithm::Ring};
  }
}

GroupPlan make_plan(CollectiveOp op, Algorithm algo, const GroupShape& g, const hw::Cluster& c,
                    const CommProfile& p, const std::vector<int>& given_order) {
  Builder b{c, p};
  GroupPlan plan;
  plan.algorithm = algo;
  const int n = g.n;
  auto bad = [&](const std::string& why) {
    throw Error(std::string("algorithm=") + algorithm_name(algo) + " cannot run " + op_name(op) + ": " + why);
  };
  if (n < 2) return plan;
  switch (algo) {
    case Algorithm::Ring:
      plan.patterns.push_back(ring_pattern(b, g));
      if (op == CollectiveOp::AllReduce) {
        plan.phases.push_back({0, 2LL * (n - 1), 1.0 / n, false});
      } else if (op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter) {
        plan.phases.push_back({0, n - 1LL, 1.0 / n, false});
      } else if (op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce) {
        plan.phases.push_back({0, n - 1LL, 1.0, true});
      } else {
        bad("ring applies to all_reduce, all_gather, reduce_scatter, broadcast and reduce");
      }
      return plan;
    case Algorithm::Tree: {
      if (op != CollectiveOp::AllReduce) bad("tree is for all_reduce");
      plan.latency_class = 1;
      plan.patterns.push_back(tree_pattern(b, g));
      int chain = 0;
      for (const auto& L : g.per_node) chain = std::max(chain, int(L.size()) - 1);
      plan.phases.push_back({0, 2LL * (chain + ceil_log2(g.nodes)), 1.0, true, 2LL * chain});
      return plan;
    }
    case Algorithm::NVLS: {
      if (op != CollectiveOp::AllReduce) bad("nvls is modelled for all_reduce");
      if (g.nodes != 1 || c.intra.kind != hw::IntraKind::NVSwitch)
        bad("needs all ranks on one NVSwitch node");
      plan.latency_class = 2;
      // Each GPU pushes S into the switch (multimem.ld_reduce of its shard by the others) and
      // pulls S back (multicast store): S on its up link and S on its down link. A ring of
      // whole-size flows loads every up and down link exactly so.
      Builder nb{c, p, p.nvls_efficiency};
      FlowPattern pat;
      for (int i = 0; i < n; ++i)
        nb.add(pat, g.sorted[std::size_t(i)], g.sorted[std::size_t((i + 1) % n)], 1.0);
      plan.patterns.push_back(pat);
      plan.phases.push_back({0, 1, 1.0, false});
      return plan;
    }
    case Algorithm::Hierarchical: {
      if (op != CollectiveOp::AllReduce) bad("hierarchical is for all_reduce");
      if (g.nodes < 2 || g.ppn < 2) bad("needs at least 2 nodes with the same number (>= 2) of ranks each");
      const int ppn = g.ppn, m = g.nodes;
      plan.patterns.push_back(intra_rings(b, g));
      plan.patterns.push_back(rail_rings(b, g));
      plan.phases.push_back({0, ppn - 1LL, 1.0 / ppn, false});                    // reduce-scatter inside
      plan.phases.push_back({1, 2LL * (m - 1), 1.0 / (double(ppn) * m), false});  // all-reduce across
      plan.phases.push_back({0, ppn - 1LL, 1.0 / ppn, false});                    // all-gather inside
      return plan;
    }
    case Algorithm::Direct: {
      FlowPattern pat;
      if (op == CollectiveOp::AllToAll) {
        for (int s : g.sorted)
          for (int d : g.sorted) b.add(pat, s, d, 1.0);
        plan.patterns.push_back(pat);
        plan.phases.push_back({0, 1, 1.0 / n, false});
      } else if (op == CollectiveOp::SendRecv) {
        // nccl-tests sendrecv: rank i sends to rank i+1 of the group as given, with wrap-around.
        const std::size_t k = given_order.size();
        for (std::size_t i = 0; i < k; ++i) b.add(pat, given_order[i], given_order[(i + 1) % k], 1.0);
        plan.patterns.push_back(pat);
        plan.phases.push_back({0, 1, 1.0, false});
      } else {
        bad("direct applies to alltoall and sendrecv");
      }
      return plan;
    }
    case Algorithm::Fit:
      bad("a fit is not a plan of flows");
  }
  return plan;
}

}  // namespace infraplan::coll

#include "calib_cluster/sweep_plan.hpp"

#include <gtest/gtest.h>

#include <set>

namespace infraplan::ccal {
namespace {

ClusterLayout layout(int nodes, int ppn) {
  ClusterLayout L;
  for (int n = 0; n < nodes; ++n) {
    L.hosts.push_back("n" + std::to_string(n));
    std::vector<int> r;
    for (int k = 0; k < ppn; ++k) r.push_back(n * ppn + k);
    L.node_ranks.push_back(r);
  }
  L.ranks_per_node = ppn;
  return L;
}

const SweepPhase* find(const std::vector<SweepPhase>& ps, const std::string& name) {
  for (const auto& p : ps)
    if (p.name == name) return &p;
  return nullptr;
}

TEST(SweepPlan, PhasesExposeTheTopology) {
  const auto ps = plan_sweeps(layout(4, 8), SweepOptions{});
  std::vector<std::string> names;
  for (const auto& p : ps) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"intra-2", "intra-4", "intra-8", "inter-2-rail", "inter-2-full",
                                             "inter-4-rail", "inter-4-full", "inter-2-cross-rail"}));
  // Intra groups: the first g local ranks of every node, all at once.
  const SweepPhase* i4 = find(ps, "intra-4");
  ASSERT_EQ(i4->groups.size(), 4u);
  EXPECT_EQ(i4->groups[2], (std::vector<int>{16, 17, 18, 19}));
  // One GPU per node on one rail: local rank 0 of each node; blocks of 2 nodes run together.
  const SweepPhase* r2 = find(ps, "inter-2-rail");
  EXPECT_EQ(r2->groups, (std::vector<std::vector<int>>{{0, 8}, {16, 24}}));
  EXPECT_EQ(r2->scope, "inter");
  const SweepPhase* f4 = find(ps, "inter-4-full");
  ASSERT_EQ(f4->groups.size(), 1u);
  EXPECT_EQ(f4->groups[0].size(), 32u);
  // Cross-rail pairs: local 0 of node 2i with local 1 of node 2i+1; sendrecv and all_reduce only.
  const SweepPhase* x = find(ps, "inter-2-cross-rail");
  EXPECT_EQ(x->groups, (std::vector<std::vector<int>>{{0, 9}, {16, 25}}));
  EXPECT_EQ(x->ops,
            (std::vector<coll::CollectiveOp>{coll::CollectiveOp::SendRecv, coll::CollectiveOp::AllReduce}));
  // Groups of a phase are disjoint.
  for (const auto& p : ps) {
    std::set<int> seen;
    for (const auto& g : p.groups)
      for (int r : g) EXPECT_TRUE(seen.insert(r).second) << p.name << " rank " << r;
  }
}

TEST(SweepPlan, OneNodeHasIntraPhasesOnlyAndOddCountsEndWithAll) {
  const auto ps = plan_sweeps(layout(1, 6), SweepOptions{});
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_EQ(ps.back().name, "intra-6");
  const auto one = plan_sweeps(layout(1, 1), SweepOptions{});  // one GPU: NCCL's per-call cost only
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "intra-1");
  EXPECT_EQ(one[0].groups, (std::vector<std::vector<int>>{{0}}));
  SweepOptions capped;
  capped.max_nodes = 2;
  EXPECT_EQ(find(plan_sweeps(layout(8, 1), capped), "inter-4-rail"), nullptr);
}

TEST(SweepPlan, SizesAndRounding) {
  SweepOptions o;
  o.min_bytes = 8;
  o.max_bytes = 64;
  EXPECT_EQ(sweep_sizes(o), (std::vector<std::size_t>{8, 16, 32, 64}));
  o.max_bytes = std::size_t(4) << 30;
  EXPECT_EQ(sweep_sizes(o).size(), 30u);  // 8 B ... 4 GiB, x2
  o.size_factor = 8;
  EXPECT_EQ(sweep_sizes(o).back(), std::size_t(1) << 30);
  EXPECT_EQ(point_bytes(100, 3), 96u);
  EXPECT_EQ(point_bytes(8, 4), 0u);
  EXPECT_EQ(point_iterations(std::size_t(256) << 20), 5);
  EXPECT_EQ(point_iterations(1024), 20);
}

}  // namespace
}  // namespace infraplan::ccal

#include "collectives/flow_sim.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace infraplan::coll {
namespace {

std::vector<int> iota(int n, int start = 0, int stride = 1) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(start + i * stride);
  return v;
}
double dur(const SimResult& r, TaskId t) {
  return r.tasks[std::size_t(t)].end_s - r.tasks[std::size_t(t)].start_s;
}

struct Case {
  CollectiveOp op;
  std::vector<int> ranks;
  std::optional<Algorithm> algo;
};

void expect_uncontended_equal(const hw::Cluster& c, const CommProfile& p, const std::vector<Case>& cases,
                              int max_barriers, double tol = 0.01) {
  FlowSimOptions o;
  o.max_barriers_per_collective = max_barriers;
  FlowSim sim(c, p, o);
  std::vector<std::pair<TaskId, double>> expect;
  TaskId prev = -1;
  for (double bytes : {4096.0, 1.0e6, 256.0e6}) {
    for (const auto& k : cases) {
      std::vector<TaskId> deps;
      if (prev >= 0) deps.push_back(prev);  // one after another: nothing shares links
      std::optional<Protocol> proto;
      if (k.algo) proto = k.algo == Algorithm::NVLS ? Protocol::Simple : Protocol::LL128;
      prev = sim.add_collective(k.op, bytes, k.ranks, deps, "comm", k.algo, proto);
      const double t = k.algo ? sim.model().estimate(k.op, bytes, k.ranks, *k.algo, *proto).seconds
                              : sim.model().estimate(k.op, bytes, k.ranks).seconds;
      expect.push_back({prev, t});
    }
  }
  SimResult r = sim.run();
  for (std::size_t i = 0; i < expect.size(); ++i) {
    const auto [id, t] = expect[i];
    EXPECT_NEAR(dur(r, id) / t, 1.0, tol)
        << "case " << i << " analytical " << t << " simulated " << dur(r, id);
  }
}

TEST(FlowSim, UncontendedMatchesAnalyticalOnNvswitchAndIb) {
  const auto c = hw::cluster_preset("dgx-h100", 4);
  std::vector<Case> cases = {
      {CollectiveOp::AllReduce, iota(8), std::nullopt},
      {CollectiveOp::AllReduce, iota(16), Algorithm::Ring},
      {CollectiveOp::AllReduce, iota(32), Algorithm::Tree},
      {CollectiveOp::AllReduce, iota(24), Algorithm::Hierarchical},
      {CollectiveOp::AllReduce, iota(8), Algorithm::NVLS},
      {CollectiveOp::AllReduce, iota(4, 0, 8), std::nullopt},
      {CollectiveOp::AllGather, {0, 1, 2, 3, 8, 9, 10, 11}, std::nullopt},
      {CollectiveOp::ReduceScatter, iota(24), std::nullopt},
      {CollectiveOp::Broadcast, iota(16), std::nullopt},
      {CollectiveOp::AllToAll, iota(16), std::nullopt},
      {CollectiveOp::SendRecv, {0, 8}, std::nullopt},
  };
  expect_uncontended_equal(c, CommProfile(), cases, 0);
  expect_uncontended_equal(c, CommProfile::ideal(), {cases[0], cases[1], cases[5], cases[9]}, 0);
}

// The 24-rank all-reduce over 3 PCIe nodes runs the tree from 256 MB: its flows have route
// latencies of 1.5 and 3.5 us, and the later ones leave the link to the others meanwhile, which
// the analytical max-min sharing (without latency) does not see: the simulation is 1.4-1.7%
// faster at every size. 2% here; 1% everywhere else.
TEST(FlowSim, UncontendedMatchesAnalyticalOnPcieAndFatTreeWithMergedSteps) {
  auto c = hw::cluster_preset("pcie-h100", 3);
  expect_uncontended_equal(c, CommProfile(),
                           {{CollectiveOp::AllReduce, iota(8), std::nullopt},
                            {CollectiveOp::AllReduce, iota(24), std::nullopt},
                            {CollectiveOp::AllGather, iota(12), std::nullopt}},
                           8, 0.02);
}

TEST(FlowSim, TwoCollectivesOnTheSameNicLinksShareThem) {
  const auto c = hw::cluster_preset("dgx-h100", 2);
  FlowSim sim(c, CommProfile::ideal());
  const double S = 1e9;
  TaskId a = sim.add_collective(CollectiveOp::AllReduce, S, {0, 8}, {}, "dp0");
  TaskId b = sim.add_collective(CollectiveOp::AllReduce, S, {0, 8}, {}, "dp1");
  TaskId alone = sim.add_collective(CollectiveOp::AllReduce, S, {0, 8}, {a, b}, "dp0");
  SimResult r = sim.run();
  EXPECT_NEAR(dur(r, a) / dur(r, alone), 2.0, 0.02);
  EXPECT_NEAR(dur(r, b) / dur(r, alone), 2.0, 0.02);
  EXPECT_NEAR(dur(r, alone) / sim.model().estimate(CollectiveOp::AllReduce, S, {0, 8}).seconds, 1.0, 0.01);
}

TEST(FlowSim, CrossRailTrafficCrossesAnOversubscribedSpine) {
  auto c = hw::cluster_preset("dgx-h100", 4);
  c.inter.oversubscription = 8;  // leaf uplinks: 4 nodes x 50 GB/s / 8 = 25 GB/s
  FlowSim sim(c, CommProfile::ideal());
  const double S = 1e9;
  TaskId same_rail = sim.add_transfer(0, 8, S, {}, "a");    // NIC 0 -> NIC 0: one leaf
  TaskId cross_rail = sim.add_transfer(1, 18, S, {}, "b");  // NIC 1 -> NIC 2: through the spine
  // Four cross-rail flows from rail 3 share leaf 3's uplink.
  std::vector<TaskId> many;
  for (int k = 0; k < 4; ++k) many.push_back(sim.add_transfer(3 + 8 * k, 8 * ((k + 1) % 4) + 4, S, {}, "c"));
  SimResult r = sim.run();
  EXPECT_NEAR(dur(r, same_rail), S / 50e9, 0.01 * S / 50e9);
  EXPECT_NEAR(dur(r, cross_rail), S / 25e9, 0.01 * S / 25e9);
  for (TaskId t : many) EXPECT_NEAR(dur(r, t), 4 * S / 25e9, 0.04 * S / 25e9);
}

TEST(FlowSim, OversubscribedFatTreeSlowsAMultiNodeAllReduce) {
  auto base = hw::cluster_preset("dgx-h100", 2);
  base.inter.topology = hw::FabricTopology::FatTree;
  base.inter.leaf_ports = 8;  // one node per leaf: every inter-node byte crosses the spine
  auto over = base;
  over.inter.oversubscription = 2;
  double t[2];
  int i = 0;
  for (const auto& c : {base, over}) {
    FlowSim sim(c, CommProfile::ideal());
    TaskId a = sim.add_collective(CollectiveOp::AllReduce, 2e9, iota(16), {}, "comm", Algorithm::Ring,
                                  Protocol::Simple);
    t[i++] = dur(sim.run(), a);
  }
  EXPECT_NEAR(t[1] / t[0], 2.0, 0.05);
}

TEST(FlowSim, StreamsOverlapAndSerialize) {
  FlowSim sim(hw::cluster_preset("dgx-h100"), CommProfile::ideal());
  TaskId c1 = sim.add_compute(0, 1e-3);
  TaskId ar = sim.add_collective(CollectiveOp::AllReduce, 1e9, iota(8));  // overlaps c1
  TaskId c2 = sim.add_compute(0, 2e-3);                                   // after c1 (stream)
  TaskId after = sim.add_compute(1, 0.5e-3, {ar, c2});
  SimResult r = sim.run();
  EXPECT_NEAR(r.tasks[std::size_t(c1)].end_s, 1e-3, 1e-9);
  EXPECT_NEAR(r.tasks[std::size_t(ar)].start_s, 0, 1e-12);
  EXPECT_NEAR(r.tasks[std::size_t(c2)].start_s, 1e-3, 1e-9);
  EXPECT_NEAR(r.tasks[std::size_t(c2)].end_s, 3e-3, 1e-9);
  const double ar_end = r.tasks[std::size_t(ar)].end_s;
  EXPECT_NEAR(r.tasks[std::size_t(after)].start_s, std::max(ar_end, 3e-3), 1e-9);
  EXPECT_NEAR(r.makespan_s, r.tasks[std::size_t(after)].end_s, 1e-12);
  EXPECT_THROW(sim.add_compute(0, 1.0, {99}), Error);
  EXPECT_THROW(sim.add_compute(64, 1.0), Error);
}

TEST(FlowSim, ManySimulationsPerProcessGiveIdenticalResults) {
  FlowSim sim(hw::cluster_preset("dgx-h100", 2));
  TaskId a = sim.add_collective(CollectiveOp::AllReduce, 64e6, iota(16));
  SimResult r1 = sim.run();
  SimResult r2 = sim.run();
  FlowSim other(hw::cluster_preset("dgx-a100-80gb", 2));
  other.add_transfer(0, 8, 1e6);
  SimResult r3 = other.run();
  SimResult r4 = sim.run();
  EXPECT_EQ(r1.tasks[std::size_t(a)].start_s, 0.0);
  EXPECT_EQ(r1.tasks[std::size_t(a)].end_s, r2.tasks[std::size_t(a)].end_s);
  EXPECT_EQ(r1.tasks[std::size_t(a)].end_s, r4.tasks[std::size_t(a)].end_s);
  EXPECT_GT(r3.makespan_s, 0);
}

TEST(FlowSim, MergedStepsKeepTheUncontendedTime) {
  const auto c = hw::cluster_preset("dgx-h100", 8);
  double t[2];
  for (int exact = 0; exact < 2; ++exact) {
    FlowSimOptions o;
    o.max_barriers_per_collective = exact ? 0 : 4;
    FlowSim sim(c, CommProfile(), o);
    TaskId a = sim.add_collective(CollectiveOp::AllReduce, 512e6, iota(64), {}, "comm", Algorithm::Ring,
                                  Protocol::Simple);
    t[exact] = dur(sim.run(), a);
  }
  EXPECT_NEAR(t[0] / t[1], 1.0, 0.005);
}

}  // namespace
}  // namespace infraplan::coll

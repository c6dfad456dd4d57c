#include "hardware/topology.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

using namespace infraplan;
using namespace infraplan::hw;

TEST(Topology, NvSwitchNodeRoutesOverNvlink) {
  Topology t(cluster_preset("dgx-h100"));
  auto p = t.path(0, 5);
  EXPECT_FALSE(p.crosses_nodes);
  EXPECT_DOUBLE_EQ(p.bottleneck_GBps, 450);
  ASSERT_EQ(p.hops.size(), 2u);
  EXPECT_EQ(p.hops[0].to, "n0/nvswitch");
}

// The roadmap's cliff: inside a node 450 GB/s per GPU, across nodes one 400 Gb/s NIC = 50 GB/s.
TEST(Topology, CrossNodePathIsBottleneckedByTheNic) {
  Topology t(cluster_preset("dgx-h100", 8));
  auto p = t.path(3, 8 * 5 + 3);  // same rail
  EXPECT_TRUE(p.crosses_nodes);
  EXPECT_DOUBLE_EQ(p.bottleneck_GBps, 50);
  EXPECT_NE(p.bottleneck.find("nic3"), std::string::npos) << p.bottleneck;
  EXPECT_GT(t.path(0, 1).bottleneck_GBps / p.bottleneck_GBps, 8.9);
}

TEST(Topology, BisectionFollowsNicsAndOversubscription) {
  auto c = cluster_preset("dgx-h100", 8);
  c.inter.topology = FabricTopology::FatTree;
  c.inter.leaf_ports = 16;  // two nodes per leaf, four leaves
  Topology full(c);
  EXPECT_NEAR(full.bisection_GBps(), 32 * 50, 1e-6);
  c.inter.oversubscription = 4;
  Topology over(c);
  EXPECT_NEAR(over.bisection_GBps(), 32 * 50 / 4.0, 1e-6);
  // One node: half the GPUs to the other half through NVSwitch (and PCIe peer paths).
  Topology node(cluster_preset("dgx-h100"));
  EXPECT_GE(node.bisection_GBps(), 4 * 450);
}

// Thousands of GPUs: the max-flow's arcs from its super source are bounded by what each GPU can
// send, so their sum cannot overflow (a fixed 2^50 per GPU did at 8,192 GPUs a side: signed
// overflow inside push-relabel, found by UBSan).
TEST(Topology, BisectionOfSixteenThousandGpus) {
  auto c = cluster_preset("dgx-h100", 2048);
  c.inter.topology = FabricTopology::FatTree;
  Topology t(c);
  EXPECT_NEAR(t.bisection_GBps(), 8192 * 50, 1e-6);
}

TEST(Topology, PcieNodeIsSlowInside) {
  Topology t(cluster_preset("pcie-h100"));
  EXPECT_DOUBLE_EQ(t.path(0, 7).bottleneck_GBps, 64);
  EXPECT_THROW(t.path(0, 8), infraplan::Error);
}

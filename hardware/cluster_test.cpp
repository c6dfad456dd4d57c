#include "hardware/cluster.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

using namespace infraplan;
using namespace infraplan::hw;

TEST(Cluster, Presets) {
  auto c = cluster_preset("dgx-h100", 8);
  EXPECT_EQ(c.total_gpus(), 64);
  EXPECT_EQ(c.node_of(9), 1);
  EXPECT_EQ(c.intra.kind, IntraKind::NVSwitch);
  EXPECT_DOUBLE_EQ(c.intra.GBps_per_gpu, 450);
  EXPECT_DOUBLE_EQ(c.inter_GBps_per_gpu(), 50);
  auto p = cluster_preset("pcie-h100");
  EXPECT_EQ(p.intra.kind, IntraKind::PCIe);
  EXPECT_EQ(p.inter.nics_per_node, 1);
  EXPECT_DOUBLE_EQ(p.inter_GBps_per_gpu(), 50.0 / 8);
  EXPECT_DOUBLE_EQ(cluster_preset("dgx-a100-80gb").inter.nic_Gbps, 200);
}

TEST(Cluster, InlineAndOverrides) {
  auto c = resolve_cluster(Json::parse(R"({"preset":"dgx-h100","nodes":4,"inter":{"oversubscription":2}})"));
  EXPECT_EQ(c.nodes, 4);
  EXPECT_DOUBLE_EQ(c.inter.oversubscription, 2);
  auto d = resolve_cluster(Json::parse(R"({"gpu":"l40s","nodes":2,"gpus_per_node":4,
      "inter":{"kind":"roce","nics_per_node":2,"nic_Gbps":100,"topology":"fat-tree"}})"));
  EXPECT_EQ(d.intra.kind, IntraKind::PCIe);
  EXPECT_DOUBLE_EQ(d.intra.GBps_per_gpu, 32);
  EXPECT_EQ(d.inter.kind, InterKind::RoCE);
  EXPECT_EQ(resolve_cluster_arg("dgx-b200:3").total_gpus(), 24);
  EXPECT_EQ(resolve_cluster_arg("h200-sxm-141gb").gpu.name, "h200-sxm-141gb");
  auto round = resolve_cluster(c.to_json());
  EXPECT_EQ(round.to_json(), c.to_json());
}

TEST(Cluster, BadInput) {
  auto err = [](const char* text) {
    try {
      resolve_cluster(Json::parse(text));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(err(R"({"preset":"dgx-h1000"})").find("did you mean 'dgx-h100'"), std::string::npos);
  EXPECT_NE(err(R"({"preset":"dgx-h100","nodes":-1})").find("cluster.nodes=-1 is invalid"),
            std::string::npos);
  EXPECT_NE(err(R"({"preset":"dgx-h100","inter":{"topology":"torus"}})").find("rail-optimized, fat-tree"),
            std::string::npos);
  EXPECT_NE(err(R"({"gpu":"l40s","intra":{"kind":"nvswitch"}})").find("needs NVLink"), std::string::npos);
  EXPECT_NE(err(R"({"nodes":2})").find("give \"preset\""), std::string::npos);
  EXPECT_THROW(resolve_cluster_arg("dgx-h100:0"), Error);
  EXPECT_THROW(resolve_cluster_arg("dgx-h100:x"), Error);
}

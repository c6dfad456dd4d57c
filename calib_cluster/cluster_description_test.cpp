#include "calib_cluster/cluster_description.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace infraplan::ccal {
namespace {

// The shape of `nvidia-smi topo -m` on an HGX H200 node (driver 580), cut to 4 GPUs and 2 NICs.
const char* kTopo =
    R"(        GPU0    GPU1    GPU2    GPU3    NIC0    NIC1    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      NV18    NV18    NV18    PXB     SYS     0-47    0               N/A
GPU1    NV18     X      NV18    NV18    SYS     SYS     0-47    0               N/A
GPU2    NV18    NV18     X      NV18    SYS     PXB     48-95   1               N/A
GPU3    NV18    NV18    NV18     X      SYS     PXB     48-95   1               N/A
NIC0    PXB     SYS     SYS     SYS      X      SYS
NIC1    SYS     SYS     PXB     PXB     SYS      X

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1
)";

ClusterLayout layout(int nodes, int ppn) {
  ClusterLayout L;
  for (int n = 0; n < nodes; ++n) {
    L.hosts.push_back("n" + std::to_string(n));
    std::vector<int> r;
    for (int k = 0; k < ppn; ++k) r.push_back(n * ppn + k);
    L.node_ranks.push_back(r);
  }
  L.ranks_per_node = ppn;
  L.device_name = "NVIDIA H200";
  return L;
}

TEST(ClusterDescription, ParsesTheTopologyMatrix) {
  const TopoMatrix m = parse_topo_matrix(kTopo);
  EXPECT_EQ(m.gpus(), (std::vector<std::string>{"GPU0", "GPU1", "GPU2", "GPU3"}));
  EXPECT_EQ(m.cell("GPU1", "GPU3"), "NV18");
  EXPECT_EQ(m.cell("GPU2", "NIC1"), "PXB");
  const auto rails = m.closest_nics();
  EXPECT_EQ(rails.at("GPU0"), "mlx5_0");
  EXPECT_EQ(rails.at("GPU3"), "mlx5_1");
  EXPECT_TRUE(parse_topo_matrix("no matrix here").gpus().empty());
}

TEST(ClusterDescription, MeasuredLinksReplaceThePreset) {
  NodeFacts n;
  n.host = "n0";
  n.gpu_topology = kTopo;
  n.nics = {{"mlx5_0", 1, "InfiniBand", 400, "4: ACTIVE"},
            {"mlx5_1", 1, "InfiniBand", 400, "4: ACTIVE"},
            {"mlx5_2", 1, "Ethernet", 100, "1: DOWN"}};
  const ClusterDescription d = describe_cluster(layout(2, 4), {}, {n});
  EXPECT_EQ(d.cluster.gpu.name, "h200-sxm-141gb");
  EXPECT_EQ(d.cluster.nodes, 2);
  EXPECT_EQ(d.cluster.gpus_per_node, 4);
  EXPECT_EQ(d.cluster.intra.kind, hw::IntraKind::NVSwitch);
  EXPECT_DOUBLE_EQ(d.cluster.intra.GBps_per_gpu, 450);
  EXPECT_EQ(d.cluster.inter.nics_per_node, 2);  // the down port is not counted
  EXPECT_DOUBLE_EQ(d.cluster.inter.nic_Gbps, 400);
  EXPECT_EQ(d.cluster.inter.kind, hw::InterKind::IB);
  EXPECT_NE(d.derivation.at("intra").get<std::string>().find("measured: nvidia-smi topo -m shows NV18"),
            std::string::npos);
  EXPECT_EQ(d.derivation.at("gpu_nic_affinity").at("GPU2"), "mlx5_1");
}

TEST(ClusterDescription, UnprobedLinksSayNotMeasured) {
  const ClusterDescription d = describe_cluster(layout(1, 2), {}, {NodeFacts{}});
  EXPECT_EQ(d.cluster.intra.kind, hw::IntraKind::NVSwitch);  // the dgx-h200 preset
  EXPECT_EQ(d.derivation.at("intra").get<std::string>().rfind("not measured", 0), 0u);
  EXPECT_EQ(d.derivation.at("inter").get<std::string>().rfind("not measured", 0), 0u);
}

TEST(ClusterDescription, UnknownGpuIsRefused) {
  ClusterLayout L = layout(1, 2);
  L.device_name = "Imaginary GPU 9000";
  EXPECT_THROW(describe_cluster(L, {}, {}), Error);
}

}  // namespace
}  // namespace infraplan::ccal

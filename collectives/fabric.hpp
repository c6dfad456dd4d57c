#pragma once
// The network of a hw::Cluster as directed links and GPU-to-GPU routes: the single description
// from which both the analytical collective model and the SimGrid platform are built, so the
// two agree by construction.
//
// Links (each one direction, bandwidth in B/s, latency in seconds):
//  - NVSwitch or PCIe nodes: per GPU an "up" link (GPU to switch) and a "down" link (switch to
//    GPU) of intra.GBps_per_gpu and half the hop latency each; the switch is a non-blocking
//    crossbar, so two GPUs talk over up(src) + down(dst).
//  - NVLink-mesh nodes: one link per ordered GPU pair of GBps_per_gpu / (gpus_per_node - 1).
//  - NICs: per NIC an up and a down link of nic_Gbps / 8, half of inter.latency_us each, so one
//    NIC-to-NIC traversal costs inter.latency_us whatever the switches in between. GPU g uses
//    NIC floor(local(g) * nics_per_node / gpus_per_node) (one NIC per GPU on DGX nodes); on PCIe
//    nodes the GPU's PCIe link is part of the way to the NIC.
//  - Leaf switches: rail-optimized fabrics give NIC k of every node a leaf of rail k (leaf_ports
//    nodes per leaf); fat-trees fill leaves with consecutive NIC ports. Each leaf has one
//    aggregated up and one down link to a non-blocking spine of (ports used x NIC bandwidth) /
//    oversubscription. Traffic between NICs on the same leaf stays off the spine.
#include <string>
#include <vector>

#include "hardware/cluster.hpp"

namespace infraplan::net {

enum class LinkKind { GpuUp, GpuDown, MeshPair, NicUp, NicDown, LeafUp, LeafDown };

struct Link {
  LinkKind kind = LinkKind::GpuUp;
  double Bps = 0;        ///< bandwidth, one direction, bytes/s
  double latency_s = 0;  ///< latency, seconds
  int node = -1;         ///< owning node (-1 for leaf links)
  int index = -1;        ///< local GPU, NIC index or leaf index
  int peer = -1;         ///< mesh pair: local index of the destination GPU
};

class Fabric {
 public:
  explicit Fabric(const hw::Cluster& c);

  const hw::Cluster& cluster() const { return cluster_; }
  int gpus() const { return cluster_.total_gpus(); }
  const std::vector<Link>& links() const { return links_; }
  const Link& link(int id) const { return links_[std::size_t(id)]; }
  /// Human-readable name, e.g. "n0/gpu3 nvlink up", "n1/nic2 down", "leaf3 -> spine".
  std::string link_name(int id) const;
  /// Appends the link ids from GPU `src` to GPU `dst` (empty when src == dst).
  void route(int src, int dst, std::vector<int>& out) const;
  std::vector<int> route(int src, int dst) const;
  /// Sum of the route's link latencies, seconds.
  double route_latency_s(int src, int dst) const;
  /// NIC index (within its node) that GPU `gpu` uses.
  int nic_of(int gpu) const;
  /// Leaf switch of NIC `nic` on `node`.
  int leaf_of(int node, int nic) const;
  int leaves() const { return leaves_; }

 private:
  int gpu_up(int g) const { return g; }
  int gpu_down(int g) const { return gpus() + g; }
  int mesh(int node, int a, int b) const;
  int nic_up(int node, int k) const { return nic_base_ + 2 * (node * cluster_.inter.nics_per_node + k); }
  int nic_down(int node, int k) const { return nic_up(node, k) + 1; }
  int leaf_up(int l) const { return leaf_base_ + 2 * l; }
  int leaf_down(int l) const { return leaf_base_ + 2 * l + 1; }

  hw::Cluster cluster_;
  std::vector<Link> links_;
  int mesh_base_ = 0, nic_base_ = 0, leaf_base_ = 0, leaves_ = 0, leaf_groups_ = 1;
};

}  // namespace infraplan::net

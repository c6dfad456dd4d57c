#include "collectives/fabric.hpp"

#include <algorithm>

namespace infraplan::net {

using hw::FabricTopology;
using hw::IntraKind;

Fabric::Fabric(const hw::Cluster& c) : cluster_(c) {
  cluster_.validate();
  const int G = gpus(), gpn = c.gpus_per_node, nics = c.inter.nics_per_node;
  const bool pcie = c.intra.kind == IntraKind::PCIe;
  const double hop_s = (pcie ? c.pcie_latency_us : c.nvlink_latency_us) * 1e-6;
  const double intra_Bps = c.intra.GBps_per_gpu * 1e9;
  // Per-GPU up/down links exist for every kind (mesh nodes use them only to reach the NIC, with
  // no bandwidth limit of their own there: they carry the PCIe path, modelled as the NIC's).
  for (int g = 0; g < G; ++g)
    links_.push_back({LinkKind::GpuUp, intra_Bps, hop_s / 2, c.node_of(g), g % gpn, -1});
  for (int g = 0; g < G; ++g)
    links_.push_back({LinkKind::GpuDown, intra_Bps, hop_s / 2, c.node_of(g), g % gpn, -1});
  mesh_base_ = int(links_.size());
  if (c.intra.kind == IntraKind::NVLinkMesh && gpn > 1) {
    const double pair_Bps = intra_Bps / (gpn - 1);
    for (int n = 0; n < c.nodes; ++n)
      for (int a = 0; a < gpn; ++a)
        for (int b = 0; b < gpn; ++b) links_.push_back({LinkKind::MeshPair, pair_Bps, hop_s, n, a, b});
  }
  nic_base_ = int(links_.size());
  const double nic_Bps = c.inter.nic_GBps() * 1e9, nic_lat = c.inter.latency_us * 1e-6 / 2;
  for (int n = 0; n < c.nodes; ++n)
    for (int k = 0; k < nics; ++k) {
      links_.push_back({LinkKind::NicUp, nic_Bps, nic_lat, n, k, -1});
      links_.push_back({LinkKind::NicDown, nic_Bps, nic_lat, n, k, -1});
    }
  // Leaves and the ports each one uses.
  const int ports = c.inter.leaf_ports;
  std::vector<int> used;
  if (c.inter.topology == FabricTopology::RailOptimized) {
    leaf_groups_ = (c.nodes + ports - 1) / ports;
    leaves_ = nics * leaf_groups_;
    used.assign(std::size_t(leaves_), 0);
    for (int n = 0; n < c.nodes; ++n)
      for (int k = 0; k < nics; ++k) used[std::size_t(leaf_of(n, k))]++;
  } else {
    const int total = c.nodes * nics;
    leaves_ = (total + ports - 1) / ports;
    used.assign(std::size_t(leaves_), 0);
    for (int p = 0; p < total; ++p) used[std::size_t(p / ports)]++;
  }
  leaf_base_ = int(links_.size());
  for (int l = 0; l < leaves_; ++l) {
    const double up = used[std::size_t(l)] * nic_Bps / c.inter.oversubscription;
    links_.push_back({LinkKind::LeafUp, up, 0, -1, l, -1});
    links_.push_back({LinkKind::LeafDown, up, 0, -1, l, -1});
  }
}

int Fabric::mesh(int node, int a, int b) const {
  const int gpn = cluster_.gpus_per_node;
  return mesh_base_ + (node * gpn + a) * gpn + b;
}

int Fabric::nic_of(int gpu) const {
  const int local = gpu % cluster_.gpus_per_node;
  return int((long long)local * cluster_.inter.nics_per_node / cluster_.gpus_per_node);
}

int Fabric::leaf_of(int node, int nic) const {
  const int ports = cluster_.inter.leaf_ports;
  if (cluster_.inter.topology == FabricTopology::RailOptimized) return nic * leaf_groups_ + node / ports;
  return (node * cluster_.inter.nics_per_node + nic) / ports;
}

void Fabric::route(int src, int dst, std::vector<int>& out) const {
  if (src == dst) return;
  const int gpn = cluster_.gpus_per_node;
  const int ns = src / gpn, nd = dst / gpn;
  const bool mesh_kind = cluster_.intra.kind == IntraKind::NVLinkMesh;
  if (ns == nd) {
    if (mesh_kind) {
      out.push_back(mesh(ns, src % gpn, dst % gpn));
    } else {
      out.push_back(gpu_up(src));
      out.push_back(gpu_down(dst));
    }
    return;
  }
  const bool pcie = cluster_.intra.kind == IntraKind::PCIe;
  const int ks = nic_of(src), kd = nic_of(dst);
  if (pcie) out.push_back(gpu_up(src));
  out.push_back(nic_up(ns, ks));
  const int ls = leaf_of(ns, ks), ld = leaf_of(nd, kd);
  if (ls != ld) {
    out.push_back(leaf_up(ls));
    out.push_back(leaf_down(ld));
  }
  out.push_back(nic_down(nd, kd));
  if (pcie) out.push_back(gpu_down(dst));
}

std::vector<int> Fabric::route(int src, int dst) const {
  std::vector<int> r;
  route(src, dst, r);
  return r;
}

double Fabric::route_latency_s(int src, int dst) const {
  double s = 0;
  std::vector<int> r;
  route(src, dst, r);
  for (int id : r) s += link(id).latency_s;
  return s;
}

std::string Fabric::link_name(int id) const {
  const Link& l = link(id);
  const std::string node = "n" + std::to_string(l.node);
  const char* intra = cluster_.intra.kind == IntraKind::PCIe ? "pcie" : "nvlink";
  switch (l.kind) {
    case LinkKind::GpuUp:
      return node + "/gpu" + std::to_string(l.index) + " " + intra + " up";
    case LinkKind::GpuDown:
      return node + "/gpu" + std::to_string(l.index) + " " + intra + " down";
    case LinkKind::MeshPair:
      return node + "/gpu" + std::to_string(l.index) + " -> gpu" + std::to_string(l.peer) + " nvlink";
    case LinkKind::NicUp:
      return node + "/nic" + std::to_string(l.index) + " up";
    case LinkKind::NicDown:
      return node + "/nic" + std::to_string(l.index) + " down";
    case LinkKind::LeafUp:
      return "leaf" + std::to_string(l.index) + " -> spine";
    case LinkKind::LeafDown:
      return "spine -> leaf" + std::to_string(l.index);
  }
  return "?";
}

}  // namespace infraplan::net

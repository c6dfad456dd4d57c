#pragma once
// The cluster as a graph (Boost.Graph): GPUs, NVSwitches / PCIe switches, NICs, leaf and spine
// switches, with per-direction bandwidths on the edges. Answers path, bottleneck and bisection
// questions; the SimGrid platform of the collectives library is built from the same Cluster.
#include <memory>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"

namespace infraplan::hw {

enum class VertexKind { GPU, NVSwitch, PCIeSwitch, NIC, Leaf, Spine };
const char* vertex_kind_name(VertexKind k);

struct TopoVertex {
  VertexKind kind = VertexKind::GPU;
  std::string name;  ///< e.g. "n0/gpu3", "n1/nic0", "leaf2", "spine"
  int node = -1;     ///< owning node, -1 for fabric switches
  int index = -1;    ///< GPU rank, NIC index within the node, or switch index
};

/// One hop of a path with the bandwidth of that link (per direction, 1e9 B/s).
struct PathHop {
  std::string from, to;
  double GBps = 0;
};

struct GpuPath {
  std::vector<PathHop> hops;
  double bottleneck_GBps = 0;  ///< minimum link bandwidth along the path
  std::string bottleneck;      ///< "from -> to" of the narrowest link
  bool crosses_nodes = false;
};

class Topology {
 public:
  explicit Topology(const Cluster& c);
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  const Cluster& cluster() const { return cluster_; }
  std::size_t vertex_count() const;
  std::size_t edge_count() const;
  const TopoVertex& vertex(std::size_t v) const;
  /// Vertex id of GPU `rank` (0-based over the cluster).
  std::size_t gpu_vertex(int rank) const;

  /// Fewest-hop path between two GPUs and its bottleneck link.
  GpuPath path(int gpu_a, int gpu_b) const;
  /// Maximum flow (1e9 B/s, one direction) from the first half of the GPUs to the second half:
  /// the bisection bandwidth of the whole cluster.
  double bisection_GBps() const;
  /// Maximum flow between two GPU sets (ranks), 1e9 B/s.
  double max_flow_GBps(const std::vector<int>& from, const std::vector<int>& to) const;

 private:
  struct Impl;
  Cluster cluster_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace infraplan::hw

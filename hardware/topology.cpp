#include "hardware/topology.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>

#include "common/error.hpp"

namespace infraplan::hw {

const char* vertex_kind_name(VertexKind k) {
  switch (k) {
    case VertexKind::GPU:
      return "gpu";
    case VertexKind::NVSwitch:
      return "nvswitch";
    case VertexKind::PCIeSwitch:
      return "pcie-switch";
    case VertexKind::NIC:
      return "nic";
    case VertexKind::Leaf:
      return "leaf";
    case VertexKind::Spine:
      return "spine";
  }
  return "?";
}

namespace {
struct EdgeProp {
  double GBps = 0;  // per direction
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, TopoVertex, EdgeProp>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
}  // namespace

struct Topology::Impl {
  Graph g;
  std::vector<Vertex> gpus;
};

Topology::Topology(const Cluster& c) : cluster_(c), impl_(std::make_unique<Impl>()) {
  c.validate();
  Graph& g = impl_->g;
  auto add = [&](VertexKind k, std::string name, int node, int index) {
    return boost::add_vertex(TopoVertex{k, std::move(name), node, index}, g);
  };
  auto link = [&](Vertex a, Vertex b, double GBps) { boost::add_edge(a, b, EdgeProp{GBps}, g); };

  const int G = c.gpus_per_node;
  const double nic_GBps = c.inter.nic_GBps();
  // Fabric: leaves grouped by rail (rail-optimized) or filled in node order (fat-tree); one
  // aggregated spine whose leaf up-links carry down-link capacity / oversubscription.
  const int nics_total = c.nodes * c.inter.nics_per_node;
  const int ports = c.inter.leaf_ports;
  std::vector<Vertex> leaves;
  Vertex spine{};
  bool multi_node = c.nodes > 1;
  auto leaf_of = [&](int node, int nic) {
    if (c.inter.topology == FabricTopology::RailOptimized) {
      int nodes_per_leaf = std::max(1, ports);
      int groups = (c.nodes + nodes_per_leaf - 1) / nodes_per_leaf;
      return nic * groups + node / nodes_per_leaf;
    }
    return (node * c.inter.nics_per_node + nic) / ports;
  };
  int n_leaves = 0;
  if (multi_node) {
    if (c.inter.topology == FabricTopology::RailOptimized) {
      int groups = (c.nodes + ports - 1) / ports;
      n_leaves = c.inter.nics_per_node * groups;
    } else {
      n_leaves = (nics_total + ports - 1) / ports;
    }
    for (int l = 0; l < n_leaves; ++l)
      leaves.push_back(add(VertexKind::Leaf, "leaf" + std::to_string(l), -1, l));
    if (n_leaves > 1) spine = add(VertexKind::Spine, "spine", -1, 0);
  }
  std::vector<double> leaf_down(std::size_t(n_leaves), 0.0);

  for (int n = 0; n < c.nodes; ++n) {
    std::string pre = "n" + std::to_string(n) + "/";
    std::vector<Vertex> node_gpus;
    for (int i = 0; i < G; ++i) {
      Vertex v = add(VertexKind::GPU, pre + "gpu" + std::to_string(i), n, n * G + i);
      node_gpus.push_back(v);
      impl_->gpus.push_back(v);
    }
    Vertex pcie = add(VertexKind::PCIeSwitch, pre + "pcie", n, 0);
    for (Vertex v : node_gpus) {
      if (c.intra.kind == IntraKind::PCIe) {
        link(v, pcie, c.intra.GBps_per_gpu);
      } else {
        link(v, pcie, c.gpu.pcie_GBps);
      }
    }
    if (c.intra.kind == IntraKind::NVSwitch) {
      Vertex sw = add(VertexKind::NVSwitch, pre + "nvswitch", n, 0);
      for (Vertex v : node_gpus) link(v, sw, c.intra.GBps_per_gpu);
    } else if (c.intra.kind == IntraKind::NVLinkMesh && G > 1) {
      for (int i = 0; i < G; ++i)
        for (int j = i + 1; j < G; ++j) link(node_gpus[i], node_gpus[j], c.intra.GBps_per_gpu / (G - 1));
    }
    if (!multi_node) continue;
    for (int k = 0; k < c.inter.nics_per_node; ++k) {
      Vertex nic = add(VertexKind::NIC, pre + "nic" + std::to_string(k), n, k);
      // A NIC sits next to "its" GPU (GPUDirect RDMA through the shared PCIe switch) when there
      // is one NIC per GPU; otherwise it hangs off the node's PCIe switch.
      if (c.inter.nics_per_node == G)
        link(node_gpus[k], nic, std::min(c.gpu.pcie_GBps, 1e9));
      else
        link(pcie, nic, c.gpu.pcie_GBps);
      int l = leaf_of(n, k);
      link(nic, leaves[l], nic_GBps);
      leaf_down[l] += nic_GBps;
    }
  }
  if (n_leaves > 1)
    for (int l = 0; l < n_leaves; ++l) link(leaves[l], spine, leaf_down[l] / c.inter.oversubscription);
}

Topology::~Topology() = default;

std::size_t Topology::vertex_count() const { return boost::num_vertices(impl_->g); }
std::size_t Topology::edge_count() const { return boost::num_edges(impl_->g); }
const TopoVertex& Topology::vertex(std::size_t v) const { return impl_->g[v]; }

std::size_t Topology::gpu_vertex(int rank) const {
  if (rank < 0 || rank >= int(impl_->gpus.size()))
    throw Error("GPU rank " + std::to_string(rank) + " is out of range [0, " +
                std::to_string(impl_->gpus.size()) + ")");
  return impl_->gpus[std::size_t(rank)];
}

GpuPath Topology::path(int gpu_a, int gpu_b) const {
  const Graph& g = impl_->g;
  Vertex s = gpu_vertex(gpu_a), t = gpu_vertex(gpu_b);
  GpuPath p;
  p.crosses_nodes = cluster_.node_of(gpu_a) != cluster_.node_of(gpu_b);
  if (s == t) {
    p.bottleneck_GBps = std::numeric_limits<double>::infinity();
    return p;
  }
  // Dijkstra on seconds per byte (1 / bandwidth) summed over hops: the fastest store-and-forward
  // route, which prefers NVLink over PCIe inside a node and the NIC rail of the target GPU.
  const std::size_t nv = boost::num_vertices(g);
  std::vector<double> dist(nv, std::numeric_limits<double>::infinity());
  std::vector<long> parent(nv, -1);
  using Item = std::pair<double, Vertex>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> pq;
  dist[s] = 0;
  parent[s] = long(s);
  pq.push({0, s});
  while (!pq.empty()) {
    auto [d, u] = pq.top();
    pq.pop();
    if (d > dist[u]) continue;
    if (u == t) break;
    for (auto [ei, ee] = boost::out_edges(u, g); ei != ee; ++ei) {
      Vertex w = boost::target(*ei, g);
      double nd = d + 1.0 / g[*ei].GBps;
      if (nd < dist[w] || (nd == dist[w] && long(u) < parent[w])) {
        dist[w] = nd;
        parent[w] = long(u);
        pq.push({nd, w});
      }
    }
  }
  if (parent[t] == -1)
    throw Error("no path between GPU " + std::to_string(gpu_a) + " and GPU " + std::to_string(gpu_b));
  std::vector<Vertex> chain;
  for (Vertex v = t; v != s; v = Vertex(parent[v])) chain.push_back(v);
  chain.push_back(s);
  std::reverse(chain.begin(), chain.end());
  p.bottleneck_GBps = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
    auto [e, ok] = boost::edge(chain[i], chain[i + 1], g);
    (void)ok;
    double bw = g[e].GBps;
    p.hops.push_back({g[chain[i]].name, g[chain[i + 1]].name, bw});
    if (bw < p.bottleneck_GBps) {
      p.bottleneck_GBps = bw;
      p.bottleneck = g[chain[i]].name + " -> " + g[chain[i + 1]].name;
    }
  }
  return p;
}

double Topology::max_flow_GBps(const std::vector<int>& from, const std::vector<int>& to) const {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, long long,
                      boost::property<boost::edge_residual_capacity_t, long long,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const Graph& g = impl_->g;
  const std::size_t n = boost::num_vertices(g);
  FlowGraph f(n + 2);
  auto cap = boost::get(boost::edge_capacity, f);
  auto rev = boost::get(boost::edge_reverse, f);
  // Integer capacities in MB/s: push-relabel's flow-conservation check (an assertion in debug
  // builds) does not hold to the last bit with floating-point capacities.
  auto add_arc = [&](std::size_t a, std::size_t b, long long c) {
    auto e1 = boost::add_edge(a, b, f).first;
    auto e2 = boost::add_edge(b, a, f).first;
    cap[e1] = c;
    cap[e2] = 0;
    rev[e1] = e2;
    rev[e2] = e1;
  };
  // What each vertex could send at most: the arcs tying a GPU to the super source or sink need no
  // more. (A fixed "infinite" capacity per GPU overflowed push-relabel's 64-bit sum over the
  // source's arcs on clusters of thousands of GPUs.)
  std::vector<long long> reach(n, 0);
  for (auto [ei, ee] = boost::edges(g); ei != ee; ++ei) {
    std::size_t a = boost::source(*ei, g), b = boost::target(*ei, g);
    const long long mbps = std::llround(g[*ei].GBps * 1000.0);
    add_arc(a, b, mbps);  // each direction has its own capacity (full duplex)
    add_arc(b, a, mbps);
    reach[a] += mbps, reach[b] += mbps;
  }
  const std::size_t src = n, sink = n + 1;
  for (int r : from) add_arc(src, gpu_vertex(r), reach[std::size_t(gpu_vertex(r))] + 1);
  for (int r : to) add_arc(gpu_vertex(r), sink, reach[std::size_t(gpu_vertex(r))] + 1);
  return double(boost::push_relabel_max_flow(f, src, sink)) / 1000.0;
}

double Topology::bisection_GBps() const {
  int n = cluster_.total_gpus();
  if (n < 2) return 0;
  std::vector<int> a, b;
  for (int r = 0; r < n; ++r) (r < n / 2 ? a : b).push_back(r);
  return max_flow_GBps(a, b);
}

}  // namespace infraplan::hw

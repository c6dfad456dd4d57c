#include "calib_cluster/cluster_description.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "common/error.hpp"

namespace infraplan::ccal {

namespace {

std::vector<std::string> split_ws(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string t;
  while (ss >> t) out.push_back(t);
  return out;
}

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

/// PCIe distance of a topo cell: lower is closer (X = self).
int distance(const std::string& cell) {
  static const std::vector<std::string> order = {"X", "PIX", "PXB", "PHB", "NODE", "SYS"};
  for (std::size_t i = 0; i < order.size(); ++i)
    if (cell == order[i]) return int(i);
  return 99;
}

/// NVLink links per GPU of a full NVSwitch connection, by NVLink generation.
int full_links(int gen) { return gen >= 4 ? 18 : gen == 3 ? 12 : 6; }

}  // namespace

std::string TopoMatrix::cell(const std::string& row, const std::string& col) const {
  auto r = rows.find(row);
  if (r == rows.end()) return "";
  for (std::size_t i = 0; i < columns.size() && i < r->second.size(); ++i)
    if (columns[i] == col) return r->second[i];
  return "";
}

std::vector<std::string> TopoMatrix::gpus() const {
  std::vector<std::string> g;
  for (const auto& c : columns)
    if (starts_with(c, "GPU")) g.push_back(c);
  return g;
}

std::map<std::string, std::string> TopoMatrix::closest_nics() const {
  std::map<std::string, std::string> out;
  for (const auto& g : gpus()) {
    std::string best;
    int best_d = 100;
    for (const auto& c : columns) {
      if (!starts_with(c, "NIC") && !starts_with(c, "mlx")) continue;
      const int d = distance(cell(g, c));
      if (d < best_d) best_d = d, best = c;
    }
    if (!best.empty()) out[g] = nic_names.count(best) ? nic_names.at(best) : best;
  }
  return out;
}

TopoMatrix parse_topo_matrix(const std::string& text) {
  TopoMatrix m;
  std::stringstream ss(text);
  std::string line;
  bool header = false;
  while (std::getline(ss, line)) {
    // Drop terminal escapes (nvidia-smi underlines the header on a terminal).
    std::string clean;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\x1b') {
        while (i < line.size() && line[i] != 'm') ++i;
        continue;
      }
      clean += line[i];
    }
    auto tok = split_ws(clean);
    if (tok.empty()) continue;
    if (!header) {
      if (starts_with(tok[0], "GPU")) {
        for (const auto& t : tok) {
          if (t == "CPU" || t == "NUMA" || t == "GPU" || t == "Affinity") break;
          m.columns.push_back(t);
        }
        header = true;
      }
      continue;
    }
    if ((starts_with(tok[0], "GPU") || starts_with(tok[0], "NIC") || starts_with(tok[0], "mlx")) &&
        tok[0].back() != ':' && tok.size() > m.columns.size()) {
      m.rows[tok[0]] = std::vector<std::string>(tok.begin() + 1, tok.begin() + 1 + long(m.columns.size()));
    } else if (starts_with(tok[0], "NIC") && tok[0].back() == ':' && tok.size() >= 2) {
      m.nic_names[tok[0].substr(0, tok[0].size() - 1)] = tok[1];
    }
  }
  return m;
}

ClusterDescription describe_cluster(const ClusterLayout& layout, const std::vector<RankFacts>& ranks,
                                    const std::vector<NodeFacts>& nodes) {
  ClusterDescription d;
  const hw::GpuSpec* gpu =
      hw::find_gpu_by_device_name(layout.device_name, ranks.empty() ? 0 : ranks.front().device_memory_bytes);
  if (!gpu)
    throw Error("GPU model '" + layout.device_name + "' is not in the catalog (" + join(hw::gpu_names()) +
                "): a cluster profile needs the GPU's datasheet terms; add it to hardware/gpu_spec.cpp");
  hw::Cluster& c = d.cluster;
  bool preset = false;
  for (const auto& name : hw::cluster_preset_names()) {
    hw::Cluster p = hw::cluster_preset(name);
    if (p.gpu.name == gpu->name) {
      c = p;
      preset = true;
      break;
    }
  }
  if (!preset) {
    c = hw::resolve_cluster(Json{{"gpu", gpu->name}});
  }
  c.name = "measured-" + gpu->name;
  c.nodes = layout.nodes();
  c.gpus_per_node = layout.ranks_per_node;
  d.derivation["gpu"] = "measured: driver names it '" + layout.device_name + "' -> catalog " + gpu->name;
  d.derivation["nodes"] = "measured: " + std::to_string(layout.nodes()) + " node(s) x " +
                          std::to_string(layout.ranks_per_node) + " rank(s)" +
                          (layout.emulated_nodes ? " (emulated nodes: blocks of ranks on one host)" : "");
  // Intra-node links from node 0's topology matrix.
  const TopoMatrix topo = nodes.empty() ? TopoMatrix{} : parse_topo_matrix(nodes.front().gpu_topology);
  const auto gpus = topo.gpus();
  if (gpus.size() >= 2) {
    int nv_pairs = 0, pairs = 0, min_links = 1 << 20;
    for (std::size_t i = 0; i < gpus.size(); ++i)
      for (std::size_t j = i + 1; j < gpus.size(); ++j) {
        ++pairs;
        const std::string cell = topo.cell(gpus[i], gpus[j]);
        if (starts_with(cell, "NV")) {
          ++nv_pairs;
          min_links = std::min(min_links, std::atoi(cell.c_str() + 2));
        }
      }
    if (nv_pairs == pairs && gpu->nvlink_gen > 0) {
      c.intra.kind = hw::IntraKind::NVSwitch;
      c.intra.GBps_per_gpu =
          gpu->nvlink_GBps * std::min(1.0, double(min_links) / full_links(gpu->nvlink_gen));
      d.derivation["intra"] = "measured: nvidia-smi topo -m shows NV" + std::to_string(min_links) +
                              " between all " + std::to_string(pairs) + " GPU pairs -> nvswitch, " +
                              std::to_string(c.intra.GBps_per_gpu) + " GB/s per GPU (datasheet per link)";
    } else if (nv_pairs > 0 && gpu->nvlink_gen > 0) {
      c.intra.kind = hw::IntraKind::NVLinkMesh;
      c.intra.GBps_per_gpu = gpu->nvlink_GBps;
      d.derivation["intra"] = "measured: NVLink between " + std::to_string(nv_pairs) + " of " +
                              std::to_string(pairs) + " GPU pairs -> nvlink-mesh";
    } else {
      c.intra.kind = hw::IntraKind::PCIe;
      c.intra.GBps_per_gpu = gpu->pcie_GBps;
      d.derivation["intra"] = "measured: no NVLink in nvidia-smi topo -m -> pcie";
    }
    Json rails = Json::object();
    for (const auto& [g, nic] : topo.closest_nics()) rails[g] = nic;
    if (!rails.empty()) d.derivation["gpu_nic_affinity"] = rails;
  } else {
    d.derivation["intra"] = std::string("not measured (no nvidia-smi topo -m matrix): ") +
                            hw::intra_kind_name(c.intra.kind) + ", " + std::to_string(c.intra.GBps_per_gpu) +
                            " GB/s per GPU from the " + (preset ? "preset" : "catalog");
  }
  // Inter-node NICs from node 0's RDMA ports.
  std::vector<const NicFacts*> active;
  if (!nodes.empty())
    for (const auto& n : nodes.front().nics)
      if (n.state.find("ACTIVE") != std::string::npos && n.rate_Gbps > 0) active.push_back(&n);
  if (!active.empty()) {
    std::vector<double> rates;
    int ib = 0;
    for (auto* n : active) {
      rates.push_back(n->rate_Gbps);
      ib += n->link_layer == "InfiniBand";
    }
    std::sort(rates.begin(), rates.end());
    c.inter.nics_per_node = int(active.size());
    c.inter.nic_Gbps = rates[rates.size() / 2];
    c.inter.kind = ib * 2 >= int(active.size()) ? hw::InterKind::IB : hw::InterKind::RoCE;
    d.derivation["inter"] = "measured: " + std::to_string(active.size()) + " active RDMA port(s), " +
                            std::to_string(int(c.inter.nic_Gbps)) + " Gb/s, " +
                            hw::inter_kind_name(c.inter.kind) +
                            " (fabric topology, oversubscription and latency not measured: preset values)";
  } else {
    d.derivation["inter"] =
        std::string("not measured (no active RDMA port seen): ") + std::to_string(c.inter.nics_per_node) +
        " x " + std::to_string(int(c.inter.nic_Gbps)) + " Gb/s " + hw::inter_kind_name(c.inter.kind) +
        " from the " + (preset ? "preset" : "catalog");
  }
  c.validate();
  return d;
}

}  // namespace infraplan::ccal

// infraplan hardware [show GPU|CLUSTER] [--json]
#include <cstdio>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "hardware/cluster.hpp"
#include "hardware/topology.hpp"
#include "common/error.hpp"

namespace infraplan::cli {

namespace {

const std::vector<OptionSpec> kSpec = {{"json", false, "machine-readable output"}};

Json gpu_json(const hw::GpuSpec& g) {
  Json peaks = Json::object();
  for (auto [d, v] : g.peak_flops) peaks[std::string(dtype_name(d))] = v;
  return {{"name", g.name},
          {"display_name", g.display_name},
          {"source", g.source},
          {"compute_capability", g.compute_capability},
          {"peak_flops", peaks},
          {"hbm_bytes", g.hbm_bytes},
          {"hbm_GBps", g.hbm_GBps},
          {"l2_bytes", g.l2_bytes},
          {"sms", g.sms},
          {"smem_per_sm_bytes", g.smem_per_sm_bytes},
          {"nvlink_gen", g.nvlink_gen},
          {"nvlink_GBps", g.nvlink_GBps},
          {"pcie_gen", g.pcie_gen},
          {"pcie_GBps", g.pcie_GBps},
          {"tdp_watts", g.tdp_watts}};
}

void print_gpu(const hw::GpuSpec& g) {
  std::printf("%s (%s), sm_%d, %d SMs\n  source: %s\n", g.display_name.c_str(), g.name.c_str(),
              g.compute_capability, g.sms, g.source.c_str());
  std::printf("  memory %s at %.0f GB/s, L2 %.0f MiB, shared memory %.0f KiB/SM\n",
              fmt_gib(g.hbm_bytes).c_str(), g.hbm_GBps, g.l2_bytes / 1048576, g.smem_per_sm_bytes / 1024);
  std::printf("  NVLink %s, PCIe Gen%d %.0f GB/s per direction, %.0f W\n",
              g.nvlink_gen ? ("gen" + std::to_string(g.nvlink_gen) + " " + fmt(g.nvlink_GBps, 0) +
                              " GB/s per direction")
                                 .c_str()
                           : "none",
              g.pcie_gen, g.pcie_GBps, g.tdp_watts);
  Table t({"dtype", "dense peak"});
  for (Dtype d : all_dtypes())
    if (auto p = g.peak(d)) t.add({std::string(dtype_name(d)), fmt_flops(*p)});
  std::printf("\n%s", t.str().c_str());
}

}  // namespace

int cmd_hardware(const std::vector<std::string>& argv) {
  Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan hardware [--json]\n       infraplan hardware show GPU|CLUSTER|CLUSTER:NODES|FILE "
        "[--json]\n\n%s",
        options_help(kSpec).c_str());
    return 0;
  }
  a.expect_positional(0, 2, "infraplan hardware [show GPU|CLUSTER|CLUSTER:NODES|FILE]");
  const auto& pos = a.positional();
  if (pos.empty()) {
    if (a.flag("json")) {
      Json g = Json::array(), c = Json::array();
      for (const auto& x : hw::gpu_catalog()) g.push_back(gpu_json(x));
      for (const auto& n : hw::cluster_preset_names()) c.push_back(hw::cluster_preset(n).to_json());
      std::printf("%s\n", Json{{"gpus", g}, {"clusters", c}}.dump(2).c_str());
      return 0;
    }
    Table t({"gpu", "bf16 TFLOP/s", "fp8 TFLOP/s", "memory", "HBM GB/s", "NVLink GB/s", "SMs"});
    for (const auto& g : hw::gpu_catalog())
      t.add({g.name, fmt(g.peak(Dtype::BF16).value_or(0) / 1e12, 1),
             g.peak(Dtype::FP8) ? fmt(*g.peak(Dtype::FP8) / 1e12, 1) : "-", fmt_gib(g.hbm_bytes),
             fmt(g.hbm_GBps, 0), g.nvlink_gen ? fmt(g.nvlink_GBps, 0) : "-", std::to_string(g.sms)});
    Table c({"cluster", "gpu", "gpus/node", "intra", "GB/s/gpu", "NICs", "Gb/s/NIC", "fabric"});
    for (const auto& n : hw::cluster_preset_names()) {
      auto x = hw::cluster_preset(n);
      c.add({x.name, x.gpu.name, std::to_string(x.gpus_per_node), hw::intra_kind_name(x.intra.kind),
             fmt(x.intra.GBps_per_gpu, 0), std::to_string(x.inter.nics_per_node), fmt(x.inter.nic_Gbps, 0),
             hw::fabric_topology_name(x.inter.topology)});
    }
    std::printf("GPUs (dense datasheet peaks):\n%s\nClusters (use NAME:NODES for several nodes):\n%s",
                t.str().c_str(), c.str().c_str());
    return 0;
  }
  if (pos[0] != "show") throw Error(unknown_name_message("hardware subcommand", pos[0], {"show"}));
  if (pos.size() != 2) throw Error("usage: infraplan hardware show GPU|CLUSTER");
  auto gpus = hw::gpu_names();
  if (std::find(gpus.begin(), gpus.end(), pos[1]) != gpus.end()) {
    const auto& g = hw::find_gpu(pos[1]);
    if (a.flag("json"))
      std::printf("%s\n", gpu_json(g).dump(2).c_str());
    else
      print_gpu(g);
    return 0;
  }
  auto c = hw::resolve_cluster_arg(pos[1]);
  hw::Topology topo(c);
  double bis = topo.bisection_GBps();
  int last = c.total_gpus() - 1;
  auto same = topo.path(0, std::min(1, last));
  auto cross = topo.path(0, last);
  if (a.flag("json")) {
    Json j = c.to_json();
    j["gpu_spec"] = gpu_json(c.gpu);
    j["total_gpus"] = c.total_gpus();
    j["topology"] = {{"vertices", topo.vertex_count()},
                     {"edges", topo.edge_count()},
                     {"bisection_GBps", bis},
                     {"intra_node_path_GBps", same.bottleneck_GBps},
                     {"first_to_last_path_GBps", cross.bottleneck_GBps},
                     {"first_to_last_bottleneck", cross.bottleneck}};
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%s: %d node(s) × %d %s = %d GPUs\n", c.name.c_str(), c.nodes, c.gpus_per_node,
              c.gpu.name.c_str(), c.total_gpus());
  std::printf("  inside a node: %s, %.0f GB/s per GPU per direction\n", hw::intra_kind_name(c.intra.kind),
              c.intra.GBps_per_gpu);
  std::printf(
      "  between nodes: %s, %d × %.0f Gb/s NICs per node (%.1f GB/s per GPU), %s, oversubscription %.2g:1\n",
      hw::inter_kind_name(c.inter.kind), c.inter.nics_per_node, c.inter.nic_Gbps, c.inter_GBps_per_gpu(),
      hw::fabric_topology_name(c.inter.topology), c.inter.oversubscription);
  std::printf("  topology graph: %zu vertices, %zu links; bisection %.0f GB/s\n", topo.vertex_count(),
              topo.edge_count(), bis);
  if (c.total_gpus() > 1) {
    std::printf("  GPU 0 -> GPU %d: %zu hops, bottleneck %.1f GB/s (%s)\n", std::min(1, last),
                same.hops.size(), same.bottleneck_GBps, same.bottleneck.c_str());
    if (cross.crosses_nodes)
      std::printf("  GPU 0 -> GPU %d: %zu hops, bottleneck %.1f GB/s (%s)\n", last, cross.hops.size(),
                  cross.bottleneck_GBps, cross.bottleneck.c_str());
  }
  std::printf("\n");
  print_gpu(c.gpu);
  return 0;
}

}  // namespace infraplan::cli

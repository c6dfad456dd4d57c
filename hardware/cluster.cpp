#include "hardware/cluster.hpp"

#include "hardware/cluster_profile.hpp"

#include <filesystem>

#include "common/limits.hpp"
#include "common/error.hpp"

namespace infraplan::hw {

static void set_default_price(Cluster& c);

const char* intra_kind_name(IntraKind k) {
  switch (k) {
    case IntraKind::NVSwitch:
      return "nvswitch";
    case IntraKind::NVLinkMesh:
      return "nvlink-mesh";
    case IntraKind::PCIe:
      return "pcie";
  }
  return "?";
}
const char* inter_kind_name(InterKind k) { return k == InterKind::IB ? "ib" : "roce"; }
const char* fabric_topology_name(FabricTopology t) {
  return t == FabricTopology::RailOptimized ? "rail-optimized" : "fat-tree";
}

double Cluster::inter_GBps_per_gpu() const {
  return inter.nics_per_node * inter.nic_GBps() / double(gpus_per_node);
}

void Cluster::validate() const {
  namespace L = limits;
  const std::string who = "cluster '" + name.substr(0, 64) + "': ";
  auto bad = [&](const std::string& field, const std::string& why) { throw Error(who + field + " " + why); };
  auto count = [&](std::int64_t v, const char* field, std::int64_t min, std::int64_t max) {
    if (v < min || v > max)
      bad(std::string(field) + "=" + std::to_string(v), "is invalid: must be an integer in " +
                                                            range_text(min, max));
  };
  auto real = [&](double v, const char* field, double min, double max) {
    if (!(v >= min && v <= max))
      bad(std::string(field) + "=" + number_text(v), "is invalid: must be in " + range_text(min, max));
  };
  count(nodes, "nodes", 1, L::kMaxNodes);
  count(gpus_per_node, "gpus_per_node", 1, L::kMaxGpusPerNode);
  if (std::int64_t(nodes) * gpus_per_node > L::kMaxGpus)
    bad("nodes × gpus_per_node = " + std::to_string(std::int64_t(nodes) * gpus_per_node),
        "GPUs is beyond the limit of " + std::to_string(L::kMaxGpus) + " GPUs per cluster");
  if (!(intra.GBps_per_gpu > 0)) bad("intra.GBps_per_gpu", "must be > 0");
  real(intra.GBps_per_gpu, "intra.GBps_per_gpu", 0, L::kMaxGBps);
  count(inter.nics_per_node, "inter.nics_per_node", 1, L::kMaxNicsPerNode);
  if (!(inter.nic_Gbps > 0)) bad("inter.nic_Gbps", "must be > 0");
  real(inter.nic_Gbps, "inter.nic_Gbps", 0, L::kMaxGbps);
  real(inter.oversubscription, "inter.oversubscription", 1, L::kMaxOversubscription);
  count(inter.leaf_ports, "inter.leaf_ports", 1, L::kMaxLeafPorts);
  real(inter.latency_us, "inter.latency_us", 0, L::kMaxLatencyUs);
  real(nvlink_latency_us, "nvlink_latency_us", 0, L::kMaxLatencyUs);
  real(pcie_latency_us, "pcie_latency_us", 0, L::kMaxLatencyUs);
  real(nccl_buffer_bytes, "nccl_buffer_bytes", 0, 1125899906842624.0);  // 0 = not measured; ≤ 1 PiB
  if (intra.kind == IntraKind::NVSwitch && gpu.nvlink_gen == 0)
    bad("intra.kind=nvswitch", "needs NVLink, which " + gpu.name + " does not have; use pcie");
}

Json Cluster::to_json() const {
  Json j = {{"name", name},
          {"gpu", gpu.name},
          {"nodes", nodes},
          {"gpus_per_node", gpus_per_node},
          {"intra", {{"kind", intra_kind_name(intra.kind)}, {"GBps_per_gpu", intra.GBps_per_gpu}}},
          {"inter",
           {{"kind", inter_kind_name(inter.kind)},
            {"nics_per_node", inter.nics_per_node},
            {"nic_Gbps", inter.nic_Gbps},
            {"topology", fabric_topology_name(inter.topology)},
            {"oversubscription", inter.oversubscription},
            {"leaf_ports", inter.leaf_ports},
            {"latency_us", inter.latency_us}}},
          {"price_per_gpu_hour", price_per_gpu_hour},
          {"reliability", reliability.to_json()},
          {"storage", storage.to_json()}};
  if (nccl_buffer_bytes > 0) j["nccl_buffer_bytes"] = nccl_buffer_bytes;
  return j;
}

static void set_default_price(Cluster& c) {
  c.price_per_gpu_hour = default_price_per_gpu_hour(c.gpu.name, &c.price_source);
}

namespace {

Cluster dgx(const std::string& name, const std::string& gpu, double nic_Gbps) {
  Cluster c;
  c.name = name;
  c.gpu = find_gpu(gpu);
  c.gpus_per_node = 8;
  c.intra = {IntraKind::NVSwitch, c.gpu.nvlink_GBps};
  c.inter.nics_per_node = 8;
  c.inter.nic_Gbps = nic_Gbps;
  set_default_price(c);
  return c;
}

// Sources: NVIDIA DGX A100 / H100 / H200 / B200 user guides (compute fabric: 8 single-port
// ConnectX-6 HDR 200 Gb/s on A100, ConnectX-7 NDR 400 Gb/s on H100/H200/B200).
std::vector<Cluster> presets() {
  std::vector<Cluster> p;
  p.push_back(dgx("dgx-a100-80gb", "a100-sxm4-80gb", 200));
  p.push_back(dgx("dgx-b200", "b200-sxm-180gb", 400));
  p.push_back(dgx("dgx-h100", "h100-sxm5-80gb", 400));
  p.push_back(dgx("dgx-h200", "h200-sxm-141gb", 400));
  {
    Cluster c;
    c.name = "pcie-h100";
    c.gpu = find_gpu("h100-pcie-80gb");
    c.gpus_per_node = 8;
    c.intra = {IntraKind::PCIe, c.gpu.pcie_GBps};
    c.inter.nics_per_node = 1;
    c.inter.nic_Gbps = 400;
    c.inter.topology = FabricTopology::FatTree;
    set_default_price(c);
    p.push_back(c);
  }
  return p;
}

const std::vector<std::string> kClusterKeys = {
    "preset", "name",           "gpu",       "nodes",      "gpus_per_node",     "intra",
    "inter",  "nvlink_latency_us", "pcie_latency_us", "reliability", "storage", "price_per_gpu_hour", "profile",
    "nccl_buffer_bytes"};

void apply_overrides(Cluster& c, const JsonObject& o) {
  o.reject_unknown(kClusterKeys);
  c.name = o.get_string("name", c.name.empty() ? "custom" : c.name);
  if (auto g = o.opt_string("gpu")) {
    try {
      c.gpu = find_gpu(*g);
    } catch (const Error& e) {
      throw Error(o.field("gpu") + ": " + e.what());
    }
    if (!o.has("intra") || !o.opt_object("intra")->has("GBps_per_gpu"))
      c.intra.GBps_per_gpu = c.intra.kind == IntraKind::PCIe ? c.gpu.pcie_GBps : c.gpu.nvlink_GBps;
    set_default_price(c);
  }
  if (o.has("reliability")) c.reliability = reliability_from_json(o.raw().at("reliability"), o.field("reliability"), c.reliability);
  if (o.has("storage")) c.storage = storage_from_json(o.raw().at("storage"), o.field("storage"), c.storage);
  if (o.has("price_per_gpu_hour")) {
    c.price_per_gpu_hour = o.get_number_min("price_per_gpu_hour", 0, 0, 1e6);
    c.price_source = o.field("price_per_gpu_hour");
  }
  namespace L = limits;
  c.nodes = int(o.get_int_min("nodes", c.nodes, 1, L::kMaxNodes));
  c.gpus_per_node = int(o.get_int_min("gpus_per_node", c.gpus_per_node, 1, L::kMaxGpusPerNode));
  c.nvlink_latency_us = o.get_number_min("nvlink_latency_us", c.nvlink_latency_us, 0, L::kMaxLatencyUs);
  c.pcie_latency_us = o.get_number_min("pcie_latency_us", c.pcie_latency_us, 0, L::kMaxLatencyUs);
  c.nccl_buffer_bytes = o.get_number_min("nccl_buffer_bytes", c.nccl_buffer_bytes, 0, 1125899906842624.0);
  if (auto in = o.opt_object("intra")) {
    in->reject_unknown({"kind", "GBps_per_gpu"});
    std::string k =
        in->get_choice("kind", intra_kind_name(c.intra.kind), {"nvswitch", "nvlink-mesh", "pcie"});
    c.intra.kind = k == "nvswitch" ? IntraKind::NVSwitch
                   : k == "pcie"   ? IntraKind::PCIe
                                   : IntraKind::NVLinkMesh;
    if (c.intra.kind != IntraKind::PCIe && c.gpu.nvlink_gen == 0)
      throw Error(in->field("kind") + "=" + k + " needs NVLink, which " + c.gpu.name +
                  " does not have; valid here: pcie");
    double fallback = c.intra.kind == IntraKind::PCIe ? c.gpu.pcie_GBps : c.gpu.nvlink_GBps;
    if (in->has("kind") && !in->has("GBps_per_gpu")) c.intra.GBps_per_gpu = fallback;
    c.intra.GBps_per_gpu = in->get_number_min(
        "GBps_per_gpu", c.intra.GBps_per_gpu > 0 ? c.intra.GBps_per_gpu : fallback, 0, limits::kMaxGBps);
    if (c.intra.GBps_per_gpu <= 0) throw Error(in->field("GBps_per_gpu") + " must be > 0");
  }
  if (auto in = o.opt_object("inter")) {
    in->reject_unknown(
        {"kind", "nics_per_node", "nic_Gbps", "topology", "oversubscription", "leaf_ports", "latency_us"});
    c.inter.kind = in->get_choice("kind", inter_kind_name(c.inter.kind), {"ib", "roce"}) == "ib"
                       ? InterKind::IB
                       : InterKind::RoCE;
    c.inter.nics_per_node = int(in->get_int_min("nics_per_node", c.inter.nics_per_node, 1, L::kMaxNicsPerNode));
    c.inter.nic_Gbps = in->get_number_min("nic_Gbps", c.inter.nic_Gbps, 1e-9, L::kMaxGbps);
    c.inter.topology = in->get_choice("topology", fabric_topology_name(c.inter.topology),
                                      {"rail-optimized", "fat-tree"}) == "fat-tree"
                           ? FabricTopology::FatTree
                           : FabricTopology::RailOptimized;
    c.inter.oversubscription =
        in->get_number_min("oversubscription", c.inter.oversubscription, 1, L::kMaxOversubscription);
    c.inter.leaf_ports = int(in->get_int_min("leaf_ports", c.inter.leaf_ports, 1, L::kMaxLeafPorts));
    c.inter.latency_us = in->get_number_min("latency_us", c.inter.latency_us, 0, L::kMaxLatencyUs);
  }
}

}  // namespace

std::vector<std::string> cluster_preset_names() {
  std::vector<std::string> n;
  for (const auto& c : presets()) n.push_back(c.name);
  return n;
}

Cluster cluster_preset(const std::string& name, int nodes) {
  for (auto c : presets()) {
    if (c.name == name) {
      c.nodes = nodes;
      c.validate();
      return c;
    }
  }
  throw Error(unknown_name_message("cluster", name, cluster_preset_names()));
}

Cluster resolve_cluster(const Json& v, const std::string& path) {
  if (v.is_string()) return resolve_cluster_arg(v.get<std::string>());
  if (is_cluster_profile(v)) return cluster_from_cluster_profile(v, path);
  JsonObject o(v, path);
  Cluster c;
  if (auto prof = o.opt_string("profile")) {
    // A measured cluster (cluster profile) with overrides, e.g. more nodes of the same kind.
    if (o.has("preset") || o.has("gpu"))
      throw Error(o.field("profile") + ": give either a cluster profile or \"preset\"/\"gpu\", not both");
    const Json j = read_json_file(*prof);
    if (!is_cluster_profile(j))
      throw Error(o.field("profile") + "='" + *prof + "' is not a cluster profile (\"schema\": "
                  "\"infraplan-cluster-profile/1\", written by infraplan calibrate cluster)");
    c = cluster_from_cluster_profile(j, *prof);
  } else if (auto p = o.opt_string("preset")) {
    try {
      c = cluster_preset(*p);
    } catch (const Error& e) {
      throw Error(o.field("preset") + ": " + e.what());
    }
  } else {
    if (!o.has("gpu"))
      throw Error(path + ": give \"preset\" (one of " + join(cluster_preset_names()) +
                  ") or \"gpu\" (one of " + join(gpu_names()) + ")");
    c.gpu = find_gpu(o.get_string("gpu"));
    c.intra = {c.gpu.nvlink_gen > 0 ? IntraKind::NVSwitch : IntraKind::PCIe,
               c.gpu.nvlink_gen > 0 ? c.gpu.nvlink_GBps : c.gpu.pcie_GBps};
    set_default_price(c);
  }
  apply_overrides(c, o);
  c.validate();
  return c;
}

Cluster resolve_cluster_arg(const std::string& arg) {
  std::error_code ec;
  if (std::filesystem::exists(arg, ec)) return resolve_cluster(read_json_file(arg), arg);
  auto colon = arg.find(':');
  if (colon != std::string::npos) {
    const std::int64_t nodes =
        parse_integer(arg.substr(colon + 1), "cluster '" + arg.substr(0, 80) + "': nodes", 1, limits::kMaxNodes);
    return cluster_preset(arg.substr(0, colon), int(nodes));
  }
  auto names = cluster_preset_names();
  if (std::find(names.begin(), names.end(), arg) != names.end()) return cluster_preset(arg);
  // A bare GPU name means one node of eight such GPUs on NVSwitch (or PCIe when no NVLink).
  auto gpus = gpu_names();
  if (std::find(gpus.begin(), gpus.end(), arg) != gpus.end())
    return resolve_cluster(Json{{"gpu", arg}, {"name", arg + "-node"}});
  throw Error(unknown_name_message("cluster", arg, names) + " (or a GPU: " + join(gpus) +
              ", PRESET:NODES, or a JSON file)");
}

}  // namespace infraplan::hw

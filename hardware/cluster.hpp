#pragma once
// A cluster: nodes of identical GPUs, an intra-node interconnect and an inter-node fabric.
#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "hardware/reliability.hpp"
#include "common/json_util.hpp"

namespace infraplan::hw {

enum class IntraKind { NVSwitch, NVLinkMesh, PCIe };
enum class InterKind { IB, RoCE };
enum class FabricTopology { RailOptimized, FatTree };

const char* intra_kind_name(IntraKind k);
const char* inter_kind_name(InterKind k);
const char* fabric_topology_name(FabricTopology t);

/// Inside a node.
struct IntraNode {
  IntraKind kind = IntraKind::NVSwitch;
  double GBps_per_gpu = 0;  ///< per GPU per direction, 1e9 B/s (NVLink: 450 on H100)
};

/// Between nodes.
struct InterNode {
  InterKind kind = InterKind::IB;
  int nics_per_node = 8;
  double nic_Gbps = 400;  ///< per NIC per direction, 1e9 bit/s
  FabricTopology topology = FabricTopology::RailOptimized;
  double oversubscription = 1.0;  ///< leaf down-link : up-link bandwidth ratio (1 = non-blocking)
  int leaf_ports = 32;            ///< NIC-facing ports per leaf switch
  double latency_us = 2.0;        ///< one NIC-to-NIC traversal through the fabric
  double nic_GBps() const { return nic_Gbps / 8.0; }
};

struct Cluster {
  std::string name;
  GpuSpec gpu;
  int nodes = 1;
  int gpus_per_node = 8;
  IntraNode intra;
  InterNode inter;
  double nvlink_latency_us = 0.7;  ///< one hop through NVLink/NVSwitch
  double pcie_latency_us = 1.5;    ///< one hop over PCIe
  Reliability reliability;         ///< failure rates and restart time (training goodput)
  Storage storage;                 ///< checkpoint bandwidth of the storage system
  /// USD per GPU-hour (cluster key "price_per_gpu_hour", CLI --price-per-gpu-hour); defaults to
  /// default_price_per_gpu_hour(gpu). `price_source` says which.
  double price_per_gpu_hour = 0;
  std::string price_source;
  /// Device memory NCCL holds on each GPU of a job, bytes, as the cluster calibration measured it
  /// (cluster key "nccl_buffer_bytes"); 0 = not measured: the memory ledger's default reserve.
  double nccl_buffer_bytes = 0;

  int total_gpus() const { return nodes * gpus_per_node; }
  int node_of(int gpu_rank) const { return gpu_rank / gpus_per_node; }
  /// Bandwidth per GPU per direction inside a node, 1e9 B/s.
  double intra_GBps() const { return intra.GBps_per_gpu; }
  /// Inter-node bandwidth available to one GPU per direction, 1e9 B/s (node NICs shared evenly).
  double inter_GBps_per_gpu() const;
  /// Checks the fields; throws infraplan::Error naming the bad one.
  void validate() const;
  Json to_json() const;
};

std::vector<std::string> cluster_preset_names();
/// A preset with `nodes` nodes; throws with suggestions when unknown.
Cluster cluster_preset(const std::string& name, int nodes = 1);
/// A preset name, an inline object, or {"preset": NAME, ...overrides}.
Cluster resolve_cluster(const Json& v, const std::string& path = "cluster");
/// A command-line argument: preset name, "preset:N" (N nodes), or a JSON file.
Cluster resolve_cluster_arg(const std::string& arg);

}  // namespace infraplan::hw

#pragma once
// What each rank of a multi-process calibration reports about itself (host, local rank, the GPU
// it drives) and about its node (NICs, GPU/NIC topology), and the checks that turn the gathered
// facts into nodes of ranks — or stop the run with a message naming the ranks that do not fit.
#include <string>
#include <vector>

#include "common/json_util.hpp"

namespace infraplan::ccal {

/// One RDMA port as /sys/class/infiniband reports it.
struct NicFacts {
  std::string name;        ///< device, e.g. "mlx5_0"
  int port = 1;            ///< port number
  std::string link_layer;  ///< "InfiniBand" or "Ethernet" (RoCE)
  double rate_Gbps = 0;    ///< port rate, 1e9 bit/s (0: unknown)
  std::string state;       ///< e.g. "4: ACTIVE"
  Json to_json() const;
};

/// Facts of one node, probed by its first local rank.
struct NodeFacts {
  std::string host;
  std::vector<NicFacts> nics;      ///< empty when the host has no RDMA devices or no sysfs
  std::string gpu_topology;        ///< `nvidia-smi topo -m` output ("" when nvidia-smi is absent)
  std::vector<std::string> notes;  ///< what could not be probed, and why
  Json to_json() const;
  static NodeFacts from_json(const Json& j);
};

/// Probes this host. `gpu_topology`: also run `nvidia-smi topo -m` (when on PATH).
NodeFacts probe_node(bool gpu_topology);

/// Facts of one rank.
struct RankFacts {
  int rank = 0;                    ///< world rank
  std::string host;                ///< host name (nodes are told apart by it)
  int local_rank = 0;              ///< rank among the host's processes (launcher's, else MPI's)
  int device = -1;                 ///< GPU index this rank drives (-1: none, host transport)
  std::string device_name;         ///< GPU model as the driver names it, or "host CPU: <model>"
  std::string device_bus_id;       ///< PCI bus id of the GPU ("" when none)
  double device_memory_bytes = 0;  ///< GPU memory, bytes
  std::string transport;           ///< "nccl" or "host-mpi"
  std::string versions;            ///< driver / runtime / NCCL versions as text
  Json to_json() const;
  static RankFacts from_json(const Json& j);
};

/// The ranks ordered into nodes.
struct ClusterLayout {
  std::vector<std::string> hosts;            ///< node order: by lowest world rank
  std::vector<std::vector<int>> node_ranks;  ///< per node: world ranks by local rank
  int ranks_per_node = 0;
  std::string device_name;      ///< the one GPU model of every rank
  bool emulated_nodes = false;  ///< nodes are blocks of ranks, not hosts
  int nodes() const { return int(node_ranks.size()); }
  /// Node index and position inside it of `rank`.
  int node_of(int rank) const;
  int local_of(int rank) const;
  Json to_json() const;
};

/// Checks the gathered facts (indexed by world rank) and orders them into nodes. Throws
/// infraplan::Error naming the ranks when: GPU models differ, two ranks of a host claim the same
/// local rank or the same GPU, or hosts run different numbers of ranks. `emulate_nodes` > 0 splits
/// the ranks into nodes of that many consecutive ranks instead of by host (to exercise the
/// inter-node sweeps on one machine).
ClusterLayout check_layout(const std::vector<RankFacts>& facts, int emulate_nodes = 0);

/// "0-3, 5, 7-8" for a sorted list of ranks.
std::string rank_ranges(std::vector<int> ranks);

}  // namespace infraplan::ccal

#pragma once
// The cluster a calibration run saw, as the planner's hw::Cluster: GPU model from the driver's
// name, nodes and GPUs per node from the ranks, the intra-node interconnect from `nvidia-smi
// topo -m` (NV<k> between every pair: an NVSwitch-like crossbar of k links per GPU; between some
// pairs: an NVLink mesh; none: PCIe) and the inter-node NICs from /sys/class/infiniband (active
// ports, their rate and link layer). What could not be measured keeps the catalog's or preset's
// value and is listed in `derivation`.
#include <map>
#include <string>
#include <vector>

#include "calib_cluster/rank_facts.hpp"
#include "hardware/cluster.hpp"

namespace infraplan::ccal {

/// `nvidia-smi topo -m` parsed: the relation of every GPU to every GPU and NIC.
struct TopoMatrix {
  std::vector<std::string> columns;                      ///< "GPU0", ..., "NIC0", ...
  std::map<std::string, std::vector<std::string>> rows;  ///< "GPU0" -> cells per column
  std::map<std::string, std::string> nic_names;          ///< "NIC0" -> "mlx5_0"
  /// Cell for (row, column), "" when absent.
  std::string cell(const std::string& row, const std::string& col) const;
  std::vector<std::string> gpus() const;
  /// For each GPU, the NIC (its device name when the legend gives it) closest in the PCIe
  /// hierarchy (PIX < PXB < PHB < NODE < SYS); "" when no NIC is listed.
  std::map<std::string, std::string> closest_nics() const;
};

/// Parses the matrix; empty when `text` holds none.
TopoMatrix parse_topo_matrix(const std::string& text);

struct ClusterDescription {
  hw::Cluster cluster;
  Json derivation;  ///< per field: "measured: ..." or "not measured: ..."
};

/// Throws infraplan::Error when the GPU model is not in the catalog.
ClusterDescription describe_cluster(const ClusterLayout& layout, const std::vector<RankFacts>& ranks,
                                    const std::vector<NodeFacts>& nodes);

}  // namespace infraplan::ccal

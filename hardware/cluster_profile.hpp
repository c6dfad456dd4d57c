#pragma once
// Reading a cluster profile ("schema": "infraplan-cluster-profile/1", written by the cluster
// calibration: docs/calibration.md, "On your cluster"): the measured cluster, the GPU profile of
// each GPU model, and the NCCL section with the refitted collective model. Scenarios name it
// under `cluster` ("cluster": "my-cluster.json", or {"profile": "my-cluster.json", "nodes": 64} to
// plan for more nodes of the same kind); the GPU profile and the comm section inside then serve
// as the scenario's profile unless it names another.
#include <optional>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "common/json_util.hpp"

namespace infraplan::hw {

/// True for a cluster profile.
bool is_cluster_profile(const Json& j);
/// True when `path` is a readable file holding a cluster profile (false for anything else).
bool is_cluster_profile_file(const std::string& path);
/// The cluster it measured; throws infraplan::Error naming `origin` when it holds none (only GPU
/// profiles were merged).
Cluster cluster_from_cluster_profile(const Json& j, const std::string& origin);
/// Catalog names of its GPU profiles.
std::vector<std::string> cluster_profile_gpus(const Json& j);
/// The GPU profile of `gpu_name` inside it, with the cluster's comm section in place of its own;
/// nullopt when it holds no profile of that GPU.
std::optional<Json> gpu_profile_from_cluster_profile(const Json& j, const std::string& gpu_name);

}  // namespace infraplan::hw

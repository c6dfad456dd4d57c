#include "hardware/cluster_profile.hpp"

#include <filesystem>
#include <fstream>

#include "common/error.hpp"

namespace infraplan::hw {

bool is_cluster_profile(const Json& j) {
  return j.is_object() && j.contains("schema") && j["schema"] == "infraplan-cluster-profile/1";
}

bool is_cluster_profile_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream f(path);
  const Json j = Json::parse(f, nullptr, false);
  return !j.is_discarded() && is_cluster_profile(j);
}

Cluster cluster_from_cluster_profile(const Json& j, const std::string& origin) {
  if (!j.contains("cluster"))
    throw Error(origin +
                ": this cluster profile holds no measured cluster (no communication calibration was "
                "merged into it): run infraplan calibrate cluster, or merge a comm run");
  return resolve_cluster(j.at("cluster"), origin + ": cluster");
}

std::vector<std::string> cluster_profile_gpus(const Json& j) {
  std::vector<std::string> out;
  for (const auto& p : j.value("gpu_profiles", Json::array()))
    out.push_back(p.value("gpu", std::string("?")));
  return out;
}

std::optional<Json> gpu_profile_from_cluster_profile(const Json& j, const std::string& gpu_name) {
  for (const auto& p : j.value("gpu_profiles", Json::array())) {
    if (p.value("gpu", std::string()) != gpu_name) continue;
    Json out = p;
    if (j.contains("comm")) out["comm"] = j.at("comm");
    return out;
  }
  return std::nullopt;
}

}  // namespace infraplan::hw

#include "strategies/scenario.hpp"

#include <filesystem>

#include "common/input_file.hpp"
#include "hardware/cluster_profile.hpp"
#include "common/error.hpp"

namespace infraplan::strat {

namespace fs = std::filesystem;

static Json resolve_relative(const Json& v, const std::string& base_dir) {
  if (!v.is_string() || base_dir.empty()) return v;
  fs::path p(v.get<std::string>());
  if (p.is_relative() && fs::exists(fs::path(base_dir) / p)) return (fs::path(base_dir) / p).string();
  return v;
}

Scenario scenario_from_json(const Json& j, const std::string& origin, const std::string& base_dir) {
  JsonObject o(j, "");
  o.reject_unknown(
      {"name", "description", "model", "cluster", "profile", "seed", "training", "serving", "workload"});
  Scenario s;
  s.origin = origin;
  s.raw = j;
  s.name = o.get_string("name", fs::path(origin).stem().string());
  if (!o.has("model")) throw Error(origin + ": 'model' is required (a preset name, a file, or an object)");
  if (!o.has("cluster"))
    throw Error(origin + ": 'cluster' is required (a preset name, a file, or an object)");
  // A cluster profile (the cluster calibration's output) named under "cluster", as a file or as
  // {"profile": FILE, overrides}: it is also the scenario's profile unless "profile" names another.
  Json cluster = resolve_relative(j.at("cluster"), base_dir);
  std::string cluster_profile;
  if (cluster.is_object() && cluster.contains("profile") && cluster["profile"].is_string()) {
    cluster["profile"] = resolve_relative(cluster["profile"], base_dir);
    cluster_profile = cluster["profile"].get<std::string>();
  } else if (cluster.is_string() && hw::is_cluster_profile_file(cluster.get<std::string>())) {
    cluster_profile = cluster.get<std::string>();
  }
  try {
    s.model = model::resolve_model(resolve_relative(j.at("model"), base_dir), "model");
    s.cluster = hw::resolve_cluster(cluster, "cluster");
  } catch (const Error& e) {
    throw Error(origin + ": " + e.what());
  }
  s.profile = cluster_profile;
  if (auto p = o.opt_string("profile")) s.profile = resolve_relative(*p, base_dir).get<std::string>();
  auto seed = o.get_int_min("seed", 1, 0, kInt64Max);
  s.seed = std::uint64_t(seed);
  try {
    if (o.has("training")) {
      s.training = training_from_json(j.at("training"), "training");
      if (s.training->framework == Framework::Auto) s.training->framework = traced_framework(s.profile);
      resolve_training(*s.training, s.model, s.cluster);
    }
    if (o.has("serving")) {
      s.serving_raw = j.at("serving");
      s.serving = serving_from_json(s.serving_raw, "serving", serving_engine_keys());
      validate_serving(*s.serving, s.model, s.cluster.gpu);
    }
  } catch (const Error& e) {
    throw Error(origin + ": " + e.what());
  }
  if (o.has("workload")) {
    if (!j.at("workload").is_object()) throw Error(origin + ": workload: expected an object");
    s.workload = j.at("workload");
  }
  // The files named inside: model, cluster, profile, workload trace, speculative draft model.
  auto note_file = [&](const Json& v) {
    const Json r = resolve_relative(v, base_dir);
    if (r.is_string() && is_regular_file_path(r.get<std::string>())) s.input_files.push_back(r.get<std::string>());
  };
  note_file(j.at("model"));
  note_file(j.at("cluster"));
  if (!s.profile.empty()) note_file(Json(s.profile));
  if (s.workload.is_object() && s.workload.contains("trace")) note_file(s.workload.at("trace"));
  if (s.serving_raw.is_object() && s.serving_raw.contains("speculative") &&
      s.serving_raw.at("speculative").is_object() && s.serving_raw.at("speculative").contains("draft_model"))
    note_file(s.serving_raw.at("speculative").at("draft_model"));
  return s;
}

Framework traced_framework(const std::string& profile_path) {
  if (profile_path.empty()) return Framework::Auto;
  Json p;
  try {
    p = read_json_file(profile_path);
  } catch (const Error&) {
    return Framework::Auto;  // the cost setup reports an unreadable profile
  }
  if (!p.is_object() || !p.contains("trace_calibration") || !p["trace_calibration"].is_object())
    return Framework::Auto;
  const Json& f = p["trace_calibration"];
  if (!f.contains("framework") || !f["framework"].is_string()) return Framework::Auto;
  return parse_framework(f["framework"].get<std::string>(), profile_path + ": trace_calibration.framework");
}

Scenario load_scenario(const std::string& path) {
  Json j = read_json_file(path);
  Scenario s = scenario_from_json(j, path, fs::path(path).parent_path().string());
  s.input_files.push_back(path);
  return s;
}

}  // namespace infraplan::strat

#include "gui/inputs.hpp"

#include <algorithm>

#include "hardware/cluster.hpp"
#include "common/error.hpp"

namespace infraplan::gui {

namespace {

// Reads obj[key] as T, or `fallback` when absent; a value of the wrong type is an error naming
// the field (the form cannot show it, and silently replacing it would change the scenario).
template <class T>
T read(const Json& obj, const char* key, const T& fallback, const std::string& path) {
  if (!obj.is_object() || !obj.contains(key) || obj.at(key).is_null()) return fallback;
  try {
    return obj.at(key).get<T>();
  } catch (const Json::exception&) {
    throw Error(path + "." + key + "=" + obj.at(key).dump() + " has the wrong type for this form field");
  }
}

Json object_or_empty(const Json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j.at(key).is_object()) return j.at(key);
  return Json::object();
}

// A length distribution's mean as the form shows it (number or {"mean": ...}).
std::int64_t length_mean(const Json& w, const char* key, std::int64_t fallback) {
  if (!w.contains(key)) return fallback;
  const Json& v = w.at(key);
  if (v.is_number()) return std::int64_t(v.get<double>());
  if (v.is_object() && v.contains("mean") && v.at("mean").is_number())
    return std::int64_t(v.at("mean").get<double>());
  return fallback;
}

Json with_mean(Json v, std::int64_t mean) {
  if (!v.is_object()) v = Json{{"dist", "lognormal"}, {"sigma", 0.5}};
  v["mean"] = mean;
  return v;
}

}  // namespace

Json to_scenario(const Inputs& in) {
  Json s = in.base.is_object() ? in.base : Json::object();
  if (!s.contains("name")) s["name"] = "infraplan-gui";
  if (!(in.model_from_base && s.contains("model"))) s["model"] = in.model;

  if (!(in.cluster_from_base && s.contains("cluster"))) {
    Json cl = object_or_empty(s, "cluster");
    if (!cl.contains("preset") || cl.value("preset", "") != in.cluster) cl = Json::object();
    cl["preset"] = in.cluster;
    cl["nodes"] = in.nodes;
    cl["gpus_per_node"] = in.gpus_per_node;
    s["cluster"] = cl;
  }

  if (in.job == Job::Training) {
    const auto& t = in.training;
    Json tj = object_or_empty(s, "training");
    tj["tp"] = t.tp, tj["pp"] = t.pp, tj["dp"] = t.dp, tj["cp"] = t.cp, tj["ep"] = t.ep;
    tj["sp"] = t.sp, tj["zero"] = t.zero;
    tj["micro_batch"] = t.micro_batch, tj["global_batch"] = t.global_batch, tj["seq_len"] = t.seq_len;
    tj["recompute"] = t.recompute, tj["pp_schedule"] = t.pp_schedule, tj["precision"] = t.precision;
    // A virtual-stage count only means something with the interleaved schedule.
    if (t.pp_schedule != "interleaved") tj.erase("pp_virtual_stages");
    s["training"] = tj;
    s.erase("serving");
    s.erase("workload");
  } else {
    const auto& v = in.serving;
    Json sj = object_or_empty(s, "serving");
    sj["replicas"] = v.replicas, sj["tp"] = v.tp, sj["weights"] = v.weights, sj["kv_dtype"] = v.kv_dtype;
    s["serving"] = sj;
    if (!v.workload_from_scenario) {
      Json w = object_or_empty(s, "workload");
      w["requests"] = v.requests;
      Json a = w.contains("arrival") && w["arrival"].is_object() ? w["arrival"] : Json{{"type", "poisson"}};
      a["rate_per_s"] = v.rate_per_s;
      w["arrival"] = a;
      w["prompt_tokens"] = with_mean(w.value("prompt_tokens", Json()), v.prompt_tokens);
      w["output_tokens"] = with_mean(w.value("output_tokens", Json()), v.output_tokens);
      s["workload"] = w;
    }
    Json w = object_or_empty(s, "workload");
    if (v.slo_ttft_ms > 0 || v.slo_tpot_ms > 0) {
      w["slo"] = {{"ttft_ms", v.slo_ttft_ms}, {"tpot_ms", v.slo_tpot_ms}};
    } else {
      w.erase("slo");
    }
    if (!w.empty()) s["workload"] = w;
    s.erase("training");
  }
  return s;
}

Inputs inputs_from_scenario(const Json& sc, const std::string& base_dir) {
  if (!sc.is_object()) throw Error("scenario: expected a JSON object (docs/scenario.md)");
  Inputs in;
  in.base = sc;
  in.base_dir = base_dir;

  const Json& m = sc.value("model", Json());
  if (m.is_string()) {
    in.model = m.get<std::string>();
  } else if (m.is_object() && m.size() == 1 && m.contains("preset") && m["preset"].is_string()) {
    in.model = m["preset"].get<std::string>();
  } else if (!m.is_null()) {
    in.model_from_base = true;
    in.model = m.is_object() ? m.value("name", std::string("inline model")) : std::string("inline model");
  }

  const Json& c = sc.value("cluster", Json());
  std::string preset;
  int nodes = 1, gpn = 0;
  const auto presets = hw::cluster_preset_names();
  const auto is_preset = [&](const std::string& name) {
    return std::find(presets.begin(), presets.end(), name) != presets.end();
  };
  const bool preset_string =
      c.is_string() && is_preset(c.get<std::string>().substr(0, c.get<std::string>().find(':')));
  if ((c.is_string() && !preset_string) || (c.is_object() && !c.contains("preset"))) {
    // A GPU name, a file or an inline cluster: used as written; the form shows what it is.
    in.cluster_from_base = true;
    try {
      const auto cluster = hw::resolve_cluster(c, "cluster");
      in.cluster = cluster.name;
      in.nodes = cluster.nodes;
      in.gpus_per_node = cluster.gpus_per_node;
    } catch (const Error&) {
      in.cluster = c.is_string() ? c.get<std::string>() : std::string("inline cluster");
    }
  } else if (c.is_string()) {
    preset = c.get<std::string>();
    if (auto colon = preset.find(':'); colon != std::string::npos) {
      try {
        nodes = std::stoi(preset.substr(colon + 1));
      } catch (const std::exception&) {
        throw Error("cluster='" + preset + "': expected PRESET:NODES");
      }
      preset = preset.substr(0, colon);
    }
  } else if (c.is_object() && c.contains("preset")) {
    preset = read<std::string>(c, "preset", "", "cluster");
    nodes = read<int>(c, "nodes", 1, "cluster");
    gpn = read<int>(c, "gpus_per_node", 0, "cluster");
  }
  if (!preset.empty()) {
    const auto cluster = hw::cluster_preset(preset, nodes);  // throws with suggestions
    in.cluster = preset;
    in.nodes = nodes;
    in.gpus_per_node = gpn > 0 ? gpn : cluster.gpus_per_node;
  }

  if (sc.contains("training")) {
    in.job = Job::Training;
    const Json& t = sc["training"];
    auto& f = in.training;
    const std::string p = "training";
    f.tp = read(t, "tp", f.tp, p), f.pp = read(t, "pp", f.pp, p), f.dp = read(t, "dp", f.dp, p);
    f.cp = read(t, "cp", f.cp, p), f.ep = read(t, "ep", f.ep, p), f.sp = read(t, "sp", f.sp, p);
    f.zero = read(t, "zero", f.zero, p);
    f.micro_batch = read(t, "micro_batch", f.micro_batch, p);
    f.global_batch = read(t, "global_batch", f.global_batch, p);
    f.seq_len = read(t, "seq_len", f.seq_len, p);
    f.recompute = read(t, "recompute", f.recompute, p);
    f.pp_schedule = read(t, "pp_schedule", f.pp_schedule, p);
    f.precision = read(t, "precision", f.precision, p);
  }
  if (sc.contains("serving")) {
    if (!sc.contains("training")) in.job = Job::Serving;
    const Json& v = sc["serving"];
    auto& f = in.serving;
    const std::string p = "serving";
    f.replicas = read(v, "replicas", f.replicas, p), f.tp = read(v, "tp", f.tp, p);
    f.weights = read(v, "weights", f.weights, p), f.kv_dtype = read(v, "kv_dtype", f.kv_dtype, p);
    f.batch = read<std::int64_t>(v, "max_num_seqs", f.batch, p);
    const Json w = object_or_empty(sc, "workload");
    f.workload_from_scenario = w.contains("classes") || w.contains("trace");
    const Json slo = object_or_empty(w, "slo");
    f.slo_ttft_ms = read<double>(slo, "ttft_ms", 0, "workload.slo");
    f.slo_tpot_ms = read<double>(slo, "tpot_ms", 0, "workload.slo");
    if (!f.workload_from_scenario && !w.empty()) {
      f.requests = read<std::int64_t>(w, "requests", 100, "workload");
      f.rate_per_s = read<double>(object_or_empty(w, "arrival"), "rate_per_s", 0, "workload.arrival");
      f.prompt_tokens = length_mean(w, "prompt_tokens", 512);
      f.output_tokens = length_mean(w, "output_tokens", 128);
    }
  }
  return in;
}

}  // namespace infraplan::gui

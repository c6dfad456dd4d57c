#include "cli/results.hpp"

#include "infraplan_build_info.hpp"

namespace infraplan::cli {

std::string command_line(const std::string& prefix, const std::vector<std::string>& args) {
  std::string s = "infraplan " + prefix;
  for (const auto& a : args) {
    const bool plain = !a.empty() && a.find_first_of(" \t\"'$\\`;&|<>*?()") == std::string::npos;
    if (plain) {
      s += " " + a;
      continue;
    }
    std::string q = "'";
    for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    s += " " + q + "'";
  }
  return s;
}

void add_warning(Json& j, const std::string& warning) {
  if (warning.empty()) return;
  if (!j.contains("warnings") || !j["warnings"].is_array()) j["warnings"] = Json::array();
  j["warnings"].push_back(warning);
}

void stamp_cli_result(Json& j, report::ResultKind kind, const ResultContext& ctx) {
  report::Provenance p;
  p.infraplan_version = build_info::kVersion;
  p.git_commit = build_info::kGitCommit;
  p.command_line = ctx.command_line;
  if (ctx.scenario) {
    p.scenario_file = ctx.scenario->origin;
    p.scenario = ctx.scenario->raw;
  }
  p.profile = ctx.profile;
  report::stamp_result(j, kind, p);
}

Json memory_train_json(const strat::Scenario& sc, const strat::MemoryLedger& L) {
  const auto& t = *sc.training;
  Json j = L.to_json();
  j["scenario"] = sc.name;
  j["training"] = t.to_json();
  Json stages = Json::array();
  for (int s = 0; s < t.pp; ++s)
    stages.push_back(strat::training_memory(sc.model, sc.cluster, t, s).to_json());
  j["stages"] = stages;
  return j;
}

Json memory_serve_json(const strat::Scenario& sc, const strat::MemoryLedger& L, long long batch,
                       long long context) {
  const auto& s = *sc.serving;
  Json j = L.to_json();
  j["scenario"] = sc.name;
  j["serving"] = s.to_json();
  j["batch"] = batch;
  j["context"] = context;
  j["kv_capacity_tokens"] = strat::serving_kv_capacity_tokens(sc.model, sc.cluster.gpu, s);
  return j;
}

Json simulate_train_json(const strat::Scenario& sc, const sim::train::TrainingResult& r,
                         const std::string& cost_name) {
  const auto& t = *sc.training;
  Json j = r.to_json();
  j["scenario"] = sc.name, j["training"] = t.to_json(), j["cost_model"] = cost_name;
  j["model"] = sc.model.name, j["cluster"] = sc.cluster.name, j["gpus"] = sc.cluster.total_gpus();
  Json stages = Json::array();
  for (int s = 0; s < t.pp; ++s)
    stages.push_back(strat::training_memory(sc.model, sc.cluster, t, s).to_json());
  j["memory_stages"] = stages;
  return j;
}

Json estimate_train_json(const strat::Scenario& sc, const sim::train::TrainingEstimate& e,
                         const std::string& cost_name) {
  Json j = e.to_json();
  j["scenario"] = sc.name, j["training"] = sc.training->to_json(), j["cost_model"] = cost_name;
  return j;
}

Json simulate_serve_json(const strat::Scenario& sc, const sim::serve::ServingResult& r,
                         const std::string& cost_name) {
  Json j = r.to_json();
  j["scenario"] = sc.name;
  j["cost_model"] = cost_name;
  return j;
}

Json plan_train_json(const plan::TrainPlanRequest& r, const plan::TrainPlan& p,
                     const std::string& cost_name) {
  Json j = p.to_json();
  j["model"] = r.model.name;
  j["cluster"] = r.cluster.to_json();
  j["seq_len"] = r.search.seq_len;
  j["global_batch"] = r.search.global_batch;
  j["cost_model"] = cost_name;
  return j;
}

Json plan_serve_json(const plan::ServeSearch& s, const plan::ServePlan& p, const std::string& cost_name) {
  Json j = p.to_json();
  j["model"] = s.model.name;
  j["gpu"] = s.gpu.name;
  j["target_rate_rps"] = s.target_rate;
  j["gpu_budget"] = s.gpus;
  j["slo"] = {
      {"ttft_ms", s.workload.slo.ttft_ms}, {"tpot_ms", s.workload.slo.tpot_ms}, {"attainment", s.attainment}};
  j["workload"] = s.workload.to_json();
  j["cost_model"] = cost_name;
  return j;
}

}  // namespace infraplan::cli

#include "gui/evaluation.hpp"

#include "infraplan_build_info.hpp"

#include "collectives/comm_model.hpp"
#include "common/error.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/derived_profile_caveat.hpp"
#include "hardware/profile.hpp"
#include "hardware/roofline_cost_model.hpp"

namespace infraplan::gui {

CostChoice scenario_cost_model(const strat::Scenario& sc) {
  return sim::make_cost_setup(sc.cluster.gpu, sc.profile, false);
}

namespace {

void plan_training_job(Evaluation& ev, const EvaluationRequest& req) {
  const auto& sc = ev.scenario;
  // As `infraplan plan train --scenario`: the job's sequence, batch, precision and optimizer
  // are the question; the layout is the answer.
  plan::TrainPlanRequest r = plan::train_plan_request_of(sc);
  if (req.progress)
    r.progress = [&req](std::int64_t visited, std::int64_t) {
      req.progress(std::to_string(visited) + " feasible layouts estimated");
    };
  auto cost = scenario_cost_model(sc);
  ev.cost_model = cost.name;
  ev.cost_provenance = cost.provenance;
  coll::CommModel comm(r.cluster, cost.comm);
  ev.train_plan = plan::plan_training(r, *cost.cost, comm);
}

void plan_serving_job(Evaluation& ev, const EvaluationRequest& req) {
  const auto& sc = ev.scenario;
  const auto setup = sim::serve::serving_setup_from_scenario(sc);
  plan::ServeSearch s;
  s.model = sc.model;
  s.gpu = sc.cluster.gpu;
  s.gpus_per_node = sc.cluster.gpus_per_node;
  s.gpus = sc.cluster.total_gpus();  // the cluster is the budget: most goodput on it
  s.workload = setup.workload;
  if (s.workload.classes.size() != 1)
    throw Error("workload: the serving plan searches for one class of requests; this workload has " +
                std::to_string(s.workload.classes.size()));
  if (s.workload.slo.ttft_ms <= 0)
    throw Error(
        "workload.slo.ttft_ms is not set: the serving plan judges deployments by goodput under a TTFT and a "
        "TPOT target (milliseconds > 0)");
  if (s.workload.slo.tpot_ms <= 0)
    throw Error(
        "workload.slo.tpot_ms is not set: the serving plan judges deployments by goodput under a TTFT and a "
        "TPOT target (milliseconds > 0)");
  s.quants = {sc.serving->weights};
  s.price_per_gpu_hour = sc.cluster.price_per_gpu_hour;
  s.price_source = sc.cluster.price_source;
  if (req.progress) s.progress = [&req](const std::string& m) { req.progress("simulating " + m); };
  auto cost = scenario_cost_model(sc);
  ev.cost_model = cost.name;
  ev.cost_provenance = cost.provenance;
  ev.serve_plan = plan::plan_serving(s, *cost.cost);
  s.progress = nullptr;  // the search is kept for its JSON; the callback refers to the request
  ev.serve_search = std::move(s);
}

}  // namespace

std::shared_ptr<const Evaluation> evaluate(const EvaluationRequest& req) {
  auto ev = std::make_shared<Evaluation>();
  ev->job = req.job;
  ev->scenario =
      strat::scenario_from_json(req.scenario, req.origin.empty() ? "form" : req.origin, req.base_dir);
  const auto& sc = ev->scenario;

  if (req.job == Job::Training) {
    if (!sc.training) throw Error("training: the scenario has no 'training' object");
    ev->ledger = strat::training_memory_peak(sc.model, sc.cluster, *sc.training);
    if (req.action == Action::Simulate) {
      auto cost = scenario_cost_model(sc);
      ev->cost_model = cost.name;
      ev->cost_provenance = cost.provenance;
      coll::CommModel comm(sc.cluster, cost.comm);
      sim::train::TrainingOptions o;
      o.keep_graph = true;  // the timeline is drawn from the executed graph
      ev->training = sim::train::simulate_training(sc.model, sc.cluster, *sc.training, *cost.cost, comm, o);
      ev->training_outlook =
          sim::train::training_outlook(sc.model, sc.cluster, *sc.training, ev->training->iteration_time_s, sc.seed);
      ev->training_range =
          sim::training_time_range(sc.model, sc.cluster, *sc.training, *cost.cost, comm, cost.spread, o);
      ev->uncertainty = cost.spread.method;
      if (auto iv = sim::training_interval(cost, ev->training->iteration_time_s, false)) {
        ev->training_interval = sim::TimeRange{iv->seconds.first, iv->seconds.second};
        ev->training_interval_note = iv->note;
      }
    } else if (req.action == Action::Plan) {
      plan_training_job(*ev, req);
    }
    return ev;
  }

  if (!sc.serving) throw Error("serving: the scenario has no 'serving' object");
  if (req.serving_batch < 1)
    throw Error("batch=" + std::to_string(req.serving_batch) + " is invalid: must be ≥ 1");
  if (req.serving_context < 1)
    throw Error("context=" + std::to_string(req.serving_context) + " is invalid: must be ≥ 1 token");
  ev->serving_batch = req.serving_batch;
  ev->serving_context = req.serving_context;
  ev->ledger =
      strat::serving_memory(sc.model, sc.cluster.gpu, *sc.serving, req.serving_batch, req.serving_context);
  ev->kv_capacity_tokens = strat::serving_kv_capacity_tokens(sc.model, sc.cluster.gpu, *sc.serving);
  if (req.action == Action::Simulate) {
    auto setup = sim::serve::serving_setup_from_scenario(sc);
    auto cost = scenario_cost_model(sc);
    ev->cost_model = cost.name;
    ev->cost_provenance = cost.provenance;
    sim::serve::SimOptions o;
    o.keep_requests = true;
    ev->serving = sim::serve::simulate_serving(setup, *cost.cost, o);
    ev->serving_range = sim::serving_range(setup, *cost.cost, cost.spread);
    ev->serving_interval = sim::serving_interval(cost, setup, ev->serving->metrics, o.power_limited);
    ev->serving_caveat = hw::derived_profile_caveat(*cost.cost, hw::CaveatFor::Serving);
    ev->uncertainty = cost.spread.method;
  } else if (req.action == Action::Plan) {
    plan_serving_job(*ev, req);
  }
  return ev;
}

report::Provenance Evaluation::provenance(bool with_profile) const {
  report::Provenance p;
  p.infraplan_version = build_info::kVersion;
  p.git_commit = build_info::kGitCommit;
  p.command_line =
      "infraplan-gui (" + (scenario.origin == "form" ? std::string("the form") : scenario.origin) + ")";
  p.scenario_file = scenario.origin;
  p.scenario = scenario.raw;
  if (with_profile) p.profile = cost_provenance;
  return p;
}

Json Evaluation::memory_json() const {
  Json j = ledger.to_json();
  j["scenario"] = scenario.name;
  if (job == Job::Training) {
    j["training"] = scenario.training->to_json();
    Json stages = Json::array();
    for (int s = 0; s < scenario.training->pp; ++s)
      stages.push_back(
          strat::training_memory(scenario.model, scenario.cluster, *scenario.training, s).to_json());
    j["stages"] = stages;
    report::stamp_result(j, report::ResultKind::MemoryTrain, provenance(false));
  } else {
    j["serving"] = scenario.serving->to_json();
    j["batch"] = serving_batch;
    j["context"] = serving_context;
    j["kv_capacity_tokens"] = kv_capacity_tokens;
    report::stamp_result(j, report::ResultKind::MemoryServe, provenance(false));
  }
  return j;
}

Json Evaluation::training_json() const {
  if (!training) return Json();
  Json j = training->to_json();
  if (training_range) j["iteration_time_range_s"] = *training_range, j["uncertainty"] = uncertainty;
  if (training_interval)
    j["iteration_time_interval_s"] = *training_interval, j["interval"] = training_interval_note;
  j["scenario"] = scenario.name, j["training"] = scenario.training->to_json(), j["cost_model"] = cost_model;
  j["model"] = scenario.model.name, j["cluster"] = scenario.cluster.name,
  j["gpus"] = scenario.cluster.total_gpus();
  if (training_outlook) {
    j["goodput"] = training_outlook->goodput.to_json(scenario.cluster.total_gpus());
    j["cost"] = training_outlook->cost.to_json();
  }
  Json stages = Json::array();
  for (int s = 0; s < scenario.training->pp; ++s)
    stages.push_back(
        strat::training_memory(scenario.model, scenario.cluster, *scenario.training, s).to_json());
  j["memory_stages"] = stages;
  report::stamp_result(j, report::ResultKind::SimulateTrain, provenance(true));
  return j;
}

Json Evaluation::serving_json() const {
  if (!serving) return Json();
  Json j = serving->to_json();
  if (serving_range) {
    const Json rj = serving_range->to_json();
    for (auto it = rj.begin(); it != rj.end(); ++it) j["metrics"][it.key()] = it.value();
    j["uncertainty"] = uncertainty;
  }
  if (serving_interval) {
    for (auto it = serving_interval->metrics.begin(); it != serving_interval->metrics.end(); ++it)
      j["metrics"][it.key()] = it.value();
    j["interval"] = serving_interval->note;
  }
  if (!serving_caveat.empty()) j["warnings"] = Json::array({serving_caveat});
  j["scenario"] = scenario.name;
  j["cost_model"] = cost_model;
  report::stamp_result(j, report::ResultKind::SimulateServe, provenance(true));
  return j;
}

Json Evaluation::plan_json() const {
  if (train_plan) {
    Json j = train_plan->to_json();
    j["model"] = scenario.model.name;
    j["cluster"] = scenario.cluster.to_json();
    j["seq_len"] = scenario.training->seq_len;
    j["global_batch"] = scenario.training->global_batch;
    j["cost_model"] = cost_model;
    report::stamp_result(j, report::ResultKind::PlanTrain, provenance(true));
    return j;
  }
  if (serve_plan && serve_search) {
    const auto& s = *serve_search;
    Json j = serve_plan->to_json();
    j["model"] = s.model.name;
    j["gpu"] = s.gpu.name;
    j["target_rate_rps"] = s.target_rate;
    j["gpu_budget"] = s.gpus;
    j["slo"] = {{"ttft_ms", s.workload.slo.ttft_ms},
                {"tpot_ms", s.workload.slo.tpot_ms},
                {"attainment", s.attainment}};
    j["workload"] = s.workload.to_json();
    j["cost_model"] = cost_model;
    report::stamp_result(j, report::ResultKind::PlanServe, provenance(true));
    return j;
  }
  return Json();
}

}  // namespace infraplan::gui

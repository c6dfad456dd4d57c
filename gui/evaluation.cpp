#include "gui/evaluation.hpp"

#include "collectives/comm_model.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/profile.hpp"
#include "hardware/roofline_cost_model.hpp"
#include "model/error.hpp"

namespace infraplan::gui {

std::unique_ptr<hw::CostModel> scenario_cost_model(const strat::Scenario& sc, std::string& name) {
  if (!sc.profile.empty()) {
    name = sc.profile;
    return hw::make_calibrated_cost_model(sc.cluster.gpu.name, sc.profile);
  }
  if (hw::has_default_profile(sc.cluster.gpu.name)) {
    try {
      auto cm = hw::make_calibrated_cost_model(sc.cluster.gpu.name);
      name = "embedded profile";
      return cm;
    } catch (const Error&) {
      // An unusable embedded profile falls back to the datasheet, as the CLI does.
    }
  }
  name = "datasheet roofline";
  return std::make_unique<hw::RooflineCostModel>(sc.cluster.gpu);
}

std::shared_ptr<const Evaluation> evaluate(const EvaluationRequest& req) {
  auto ev = std::make_shared<Evaluation>();
  ev->job = req.job;
  const std::string origin = req.base_dir.empty() ? std::string("form") : req.base_dir + "/form";
  ev->scenario = strat::scenario_from_json(req.scenario, origin, req.base_dir);
  const auto& sc = ev->scenario;

  if (req.job == Job::Training) {
    if (!sc.training) throw Error("training: the scenario has no 'training' object");
    ev->ledger = strat::training_memory_peak(sc.model, sc.cluster, *sc.training);
    if (req.simulate) {
      auto cost = scenario_cost_model(sc, ev->cost_model);
      coll::CommProfile cp;
      if (!sc.profile.empty()) cp = coll::CommProfile::from_json(read_json_file(sc.profile), sc.profile);
      coll::CommModel comm(sc.cluster, cp);
      sim::train::TrainingOptions o;
      o.keep_graph = true;  // the timeline is drawn from the executed graph
      ev->training = sim::train::simulate_training(sc.model, sc.cluster, *sc.training, *cost, comm, o);
    }
    return ev;
  }

  if (!sc.serving) throw Error("serving: the scenario has no 'serving' object");
  if (req.serving_batch < 1) throw Error("batch=" + std::to_string(req.serving_batch) + " is invalid: must be ≥ 1");
  if (req.serving_context < 1)
    throw Error("context=" + std::to_string(req.serving_context) + " is invalid: must be ≥ 1 token");
  ev->serving_batch = req.serving_batch;
  ev->serving_context = req.serving_context;
  ev->ledger = strat::serving_memory(sc.model, sc.cluster.gpu, *sc.serving, req.serving_batch, req.serving_context);
  ev->kv_capacity_tokens = strat::serving_kv_capacity_tokens(sc.model, sc.cluster.gpu, *sc.serving);
  if (req.simulate) {
    auto setup = sim::serve::serving_setup_from_scenario(sc);
    auto cost = scenario_cost_model(sc, ev->cost_model);
    sim::serve::SimOptions o;
    o.keep_requests = true;
    ev->serving = sim::serve::simulate_serving(setup, *cost, o);
  }
  return ev;
}

Json Evaluation::memory_json() const {
  Json j = ledger.to_json();
  j["scenario"] = scenario.name;
  if (job == Job::Training) {
    j["training"] = scenario.training->to_json();
  } else {
    j["serving"] = scenario.serving->to_json();
    j["batch"] = serving_batch;
    j["context"] = serving_context;
    j["kv_capacity_tokens"] = kv_capacity_tokens;
  }
  return j;
}

Json Evaluation::training_json() const {
  if (!training) return Json();
  Json j = training->to_json();
  j["scenario"] = scenario.name, j["training"] = scenario.training->to_json(), j["cost_model"] = cost_model;
  j["model"] = scenario.model.name, j["cluster"] = scenario.cluster.name, j["gpus"] = scenario.cluster.total_gpus();
  return j;
}

Json Evaluation::serving_json() const {
  if (!serving) return Json();
  Json j = serving->to_json();
  j["scenario"] = scenario.name;
  j["cost_model"] = cost_model;
  return j;
}

}  // namespace infraplan::gui

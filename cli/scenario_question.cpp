#include "cli/scenario_question.hpp"

#include "cli/results.hpp"
#include "collectives/comm_model.hpp"
#include "common/error.hpp"
#include "hardware/derived_profile_caveat.hpp"
#include "planner/serve_planner.hpp"
#include "planner/train_planner.hpp"
#include "simulator/cost_setup.hpp"
#include "simulator/prediction_range.hpp"
#include "simulator/serving_sim.hpp"
#include "simulator/training_sim.hpp"
#include "simulator/validated_interval.hpp"
#include "strategies/memory_ledger.hpp"

namespace infraplan::cli {

Question parse_question(const std::string& name, const std::string& flag) {
  if (name == "auto") return Question::Auto;
  if (name == "memory") return Question::Memory;
  if (name == "simulate") return Question::Simulate;
  throw Error(unknown_name_message(flag, name, {"auto", "memory", "simulate"}));
}

namespace {

std::vector<std::string> scenario_args(const strat::Scenario& sc, bool roofline) {
  std::vector<std::string> a = {"--scenario", sc.origin};
  if (roofline) a.push_back("--roofline");
  a.push_back("--json");
  return a;
}

Json memory_train(const strat::Scenario& sc) {
  const auto L = strat::training_memory_peak(sc.model, sc.cluster, *sc.training);
  Json j = memory_train_json(sc, L);
  stamp_cli_result(j, report::ResultKind::MemoryTrain,
                   {command_line("memory train", scenario_args(sc, false)), &sc, Json()});
  return j;
}

Json memory_serve(const strat::Scenario& sc) {
  const auto& s = *sc.serving;
  const long long batch = s.max_num_seqs, context = sc.model.max_seq;
  const auto L = strat::serving_memory(sc.model, sc.cluster.gpu, s, batch, context);
  Json j = memory_serve_json(sc, L, batch, context);
  stamp_cli_result(j, report::ResultKind::MemoryServe,
                   {command_line("memory serve", scenario_args(sc, false)), &sc, Json()});
  return j;
}

Json simulate_train(const strat::Scenario& sc, bool roofline) {
  auto cs = sim::make_cost_setup(sc.cluster.gpu, sc.profile, roofline);
  coll::CommModel comm(sc.cluster, cs.comm);
  const sim::train::TrainingOptions opts;
  auto r = sim::train::simulate_training(sc.model, sc.cluster, *sc.training, *cs.cost, comm, opts);
  Json j = simulate_train_json(sc, r, cs.name);
  // The same range and interval as simulate train prints (reports draw them).
  if (auto range =
          sim::training_time_range(sc.model, sc.cluster, *sc.training, *cs.cost, comm, cs.spread, opts))
    j["iteration_time_range_s"] = *range, j["uncertainty"] = cs.spread.method;
  if (auto iv = sim::training_interval(cs, r.iteration_time_s, false))
    j["iteration_time_interval_s"] = {iv->seconds.first, iv->seconds.second}, j["interval"] = iv->note;
  stamp_cli_result(j, report::ResultKind::SimulateTrain,
                   {command_line("simulate train", scenario_args(sc, roofline)), &sc, cs.provenance});
  return j;
}

Json simulate_serve(const strat::Scenario& sc, bool roofline) {
  auto setup = sim::serve::serving_setup_from_scenario(sc);
  auto cs = sim::make_cost_setup(sc.cluster.gpu, sc.profile, roofline);
  sim::serve::SimOptions o;
  o.keep_requests = true;
  auto r = sim::serve::simulate_serving(setup, *cs.cost, o);
  Json j = simulate_serve_json(sc, r, cs.name);
  if (auto range = sim::serving_range(setup, *cs.cost, cs.spread)) {
    const Json rj = range->to_json();
    for (auto it = rj.begin(); it != rj.end(); ++it) j["metrics"][it.key()] = it.value();
    j["uncertainty"] = cs.spread.method;
  }
  if (auto iv = sim::serving_interval(cs, setup, r.metrics, o.power_limited)) {
    for (auto it = iv->metrics.begin(); it != iv->metrics.end(); ++it) j["metrics"][it.key()] = it.value();
    j["interval"] = iv->note;
  }
  // A derived profile says so, as simulate serve does.
  add_warning(j, hw::derived_profile_caveat(*cs.cost, hw::CaveatFor::Serving));
  stamp_cli_result(j, report::ResultKind::SimulateServe,
                   {command_line("simulate serve", scenario_args(sc, roofline)), &sc, cs.provenance});
  return j;
}

}  // namespace

Json answer_question(const strat::Scenario& sc, const QuestionOptions& o) {
  if (sc.serving && !sc.workload.is_null()) {
    if (o.question == Question::Memory) return memory_serve(sc);
    return simulate_serve(sc, o.roofline);
  }
  if (sc.serving) {
    if (o.question == Question::Simulate)
      throw Error(sc.origin + ": --question simulate needs a 'workload' object to serve (docs/serving.md)");
    return memory_serve(sc);
  }
  if (sc.training) {
    if (o.question == Question::Memory) return memory_train(sc);
    if (o.question == Question::Auto &&
        !strat::training_memory_peak(sc.model, sc.cluster, *sc.training).fits())
      return memory_train(sc);
    return simulate_train(sc, o.roofline);
  }
  throw Error(sc.origin +
              ": the scenario asks nothing: add a 'training' or a 'serving' object (docs/scenario.md)");
}

Json answer_plan(const strat::Scenario& sc, const QuestionOptions& o) {
  if (sc.training) {
    plan::TrainPlanRequest r = plan::train_plan_request_of(sc);
    r.top = o.top;
    r.train_tokens = o.train_tokens;
    auto cs = sim::make_cost_setup(r.cluster.gpu, sc.profile, o.roofline);
    coll::CommModel comm(r.cluster, cs.comm);
    auto p = plan::plan_training(r, *cs.cost, comm);
    Json j = plan_train_json(r, p, cs.name);
    std::vector<std::string> args = {"--scenario", sc.origin, "--top", std::to_string(o.top)};
    if (o.train_tokens > 0) args.insert(args.end(), {"--tokens", Json(o.train_tokens).dump()});
    if (o.roofline) args.push_back("--roofline");
    args.push_back("--json");
    stamp_cli_result(j, report::ResultKind::PlanTrain,
                     {command_line("plan train", args), &sc, cs.provenance});
    return j;
  }
  if (!sc.serving || sc.workload.is_null())
    throw Error(sc.origin +
                ": --plan needs a 'training' object, or 'serving' with a 'workload' (docs/scenario.md)");
  auto setup = sim::serve::serving_setup_from_scenario(sc);
  plan::ServeSearch s;
  s.model = sc.model;
  s.gpu = sc.cluster.gpu;
  s.gpus_per_node = sc.cluster.gpus_per_node;
  s.workload = setup.workload;
  if (!s.workload.trace_path.empty() || s.workload.classes.size() != 1)
    throw Error(
        sc.origin + ": --plan for serving needs a synthetic workload with exactly one request class (found " +
        (s.workload.trace_path.empty() ? std::to_string(s.workload.classes.size()) + " classes" : "a trace") +
        ")");
  s.target_rate = s.workload.classes[0].arrival.rate_per_s;
  if (s.target_rate <= 0)
    throw Error(sc.origin + ": --plan for serving needs workload.arrival.rate_per_s > 0 (the target rate)");
  if (s.workload.slo.ttft_ms <= 0 || s.workload.slo.tpot_ms <= 0)
    throw Error(sc.origin +
                ": --plan for serving needs workload.slo.ttft_ms and workload.slo.tpot_ms (the targets)");
  s.quants = {sc.serving->weights};
  s.tps = o.serve_tps;
  s.probe_requests = o.probe_requests;
  auto cs = sim::make_cost_setup(s.gpu, sc.profile, o.roofline);
  auto p = plan::plan_serving(s, *cs.cost);
  Json j = plan_serve_json(s, p, cs.name);
  // plan serve has no --scenario; the equivalent command reads the scenario's workload.
  std::vector<std::string> args = {"--model",    sc.model.name,
                                   "--gpu",      s.gpu.name,
                                   "--rate",     Json(s.target_rate).dump(),
                                   "--workload", sc.origin,
                                   "--seed",     std::to_string(sc.seed),
                                   "--ttft-ms",  Json(s.workload.slo.ttft_ms).dump(),
                                   "--tpot-ms",  Json(s.workload.slo.tpot_ms).dump(),
                                   "--quant",    strat::weight_quant_name(sc.serving->weights)};
  if (!o.serve_tps.empty()) {
    std::string tps;
    for (int t : o.serve_tps) tps += (tps.empty() ? "" : ",") + std::to_string(t);
    args.insert(args.end(), {"--tp", tps});
  }
  if (o.probe_requests != 300)
    args.insert(args.end(), {"--probe-requests", std::to_string(o.probe_requests)});
  args.push_back("--json");
  stamp_cli_result(j, report::ResultKind::PlanServe, {command_line("plan serve", args), &sc, cs.provenance});
  return j;
}

}  // namespace infraplan::cli

#pragma once
// The documents the commands print with --json, one builder per command, shared with
// `infraplan report` (which runs the same computations in-process): a report made from a
// scenario shows exactly the numbers the command's --json prints.
//
// Every document is stamped with "result_kind" (memory-train, memory-serve, simulate-train,
// simulate-train-estimate, simulate-serve, plan-train, plan-serve), "result_version" (1) and
// "provenance": {"infraplan_version", "git_commit" (the tree the binary was built from), "command_line",
// "scenario_file" and "scenario" (the file as written, when there is one), "profile" (the cost
// model's source: measured/derived profile or roofline, GPU, date)}. Existing keys are unchanged.
#include <optional>
#include <string>
#include <vector>

#include "common/json_util.hpp"
#include "planner/serve_planner.hpp"
#include "planner/train_planner.hpp"
#include "report/result_view.hpp"
#include "simulator/serving_sim.hpp"
#include "simulator/training_sim.hpp"
#include "strategies/memory_ledger.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::cli {

/// What the provenance of a result records besides the build.
struct ResultContext {
  std::string command_line;                   ///< as typed (see command_line())
  const strat::Scenario* scenario = nullptr;  ///< the scenario read, if any
  Json profile;                               ///< sim::CostSetup::provenance, or null (memory)
};

/// "infraplan <prefix> <args…>", arguments with spaces or quotes single-quoted.
std::string command_line(const std::string& prefix, const std::vector<std::string>& args);

/// Adds result_kind, result_version and provenance (this build's version and commit) to `j`.
void stamp_cli_result(Json& j, report::ResultKind kind, const ResultContext& ctx);
/// Appends `warning` to the result's "warnings" array (created when absent); nothing when empty.
void add_warning(Json& j, const std::string& warning);

/// memory train: the shown ledger `L` (peak stage or --stage) plus "stages": every stage's ledger.
Json memory_train_json(const strat::Scenario& sc, const strat::MemoryLedger& L);
/// memory serve: the ledger at `batch` sequences of `context` tokens and the KV capacity.
Json memory_serve_json(const strat::Scenario& sc, const strat::MemoryLedger& L, long long batch,
                       long long context);
/// simulate train: the result plus "memory_stages" (every pipeline stage's ledger).
Json simulate_train_json(const strat::Scenario& sc, const sim::train::TrainingResult& r,
                         const std::string& cost_name);
/// simulate train --estimate.
Json estimate_train_json(const strat::Scenario& sc, const sim::train::TrainingEstimate& e,
                         const std::string& cost_name);
/// simulate serve.
Json simulate_serve_json(const strat::Scenario& sc, const sim::serve::ServingResult& r,
                         const std::string& cost_name);
/// plan train.
Json plan_train_json(const plan::TrainPlanRequest& r, const plan::TrainPlan& p, const std::string& cost_name);
/// plan serve.
Json plan_serve_json(const plan::ServeSearch& s, const plan::ServePlan& p, const std::string& cost_name);

}  // namespace infraplan::cli

#pragma once
// Evaluation: everything the planner window shows for one scenario, computed by the libraries
// (memory ledger, training simulation, serving simulation) without Qt, so it can run on a worker
// thread and be tested headless. Its JSON is the JSON the CLI prints for the same question.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "gui/inputs.hpp"
#include "model/json_util.hpp"
#include "simulator/serving_sim.hpp"
#include "simulator/training_sim.hpp"
#include "strategies/memory_ledger.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::gui {

/// What to compute beyond the memory ledger (which is always computed: it is cheap).
struct EvaluationRequest {
  Json scenario;              ///< a scenario object (to_scenario of the form)
  std::string base_dir;       ///< where relative paths inside it resolve
  Job job = Job::Training;
  bool simulate = false;      ///< also run the training or serving simulation
  std::int64_t serving_batch = 64;     ///< serving ledger: concurrent sequences per replica
  std::int64_t serving_context = 4096; ///< serving ledger: tokens per sequence
};

struct Evaluation {
  Job job = Job::Training;
  strat::Scenario scenario;    ///< parsed and validated
  strat::MemoryLedger ledger;  ///< training: the peak stage; serving: one GPU of a replica
  // Serving memory view.
  std::int64_t serving_batch = 0, serving_context = 0;
  std::int64_t kv_capacity_tokens = 0;  ///< tokens of KV one replica holds
  /// Cost model the simulation used ("embedded profile", a profile path or "datasheet roofline").
  std::string cost_model;
  std::optional<sim::train::TrainingResult> training;  ///< when simulated (graph kept, for the timeline)
  std::optional<sim::serve::ServingResult> serving;    ///< when simulated (requests kept, for the CDF)

  /// `infraplan memory train|serve --json`: the ledger's to_json() plus the scenario name and
  /// the resolved training or serving config (and batch, context, kv_capacity_tokens).
  Json memory_json() const;
  /// `infraplan simulate train --json` (null when not simulated).
  Json training_json() const;
  /// `infraplan simulate serve --json` (null when not simulated).
  Json serving_json() const;
};

/// Parses and validates the scenario, builds the ledger and, when asked, simulates. Throws
/// infraplan::Error with the library's message (naming the field) on bad input.
std::shared_ptr<const Evaluation> evaluate(const EvaluationRequest& req);

/// The cost model the CLI would use for this scenario: its profile, else the GPU's embedded
/// profile, else the datasheet roofline. `name` receives a label for it.
std::unique_ptr<hw::CostModel> scenario_cost_model(const strat::Scenario& sc, std::string& name);

}  // namespace infraplan::gui

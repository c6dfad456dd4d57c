#pragma once
// Evaluation: everything the planner window shows for one scenario, computed by the libraries
// (memory ledger, training simulation, serving simulation) without Qt, so it can run on a worker
// thread and be tested headless. Its JSON is the JSON the CLI prints for the same question.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "collectives/comm_profile.hpp"
#include "common/json_util.hpp"
#include "gui/inputs.hpp"
#include "hardware/cost_model.hpp"
#include "planner/serve_planner.hpp"
#include "planner/train_planner.hpp"
#include "report/result_view.hpp"
#include "simulator/cost_setup.hpp"
#include "simulator/prediction_range.hpp"
#include "simulator/serving_sim.hpp"
#include "simulator/training_goodput.hpp"
#include "simulator/training_sim.hpp"
#include "simulator/validated_interval.hpp"
#include "strategies/memory_ledger.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::gui {

/// What to compute beyond the memory ledger (which is always computed: it is cheap).
enum class Action {
  Memory,    ///< the ledger only
  Simulate,  ///< the training or serving simulation of the scenario as it stands
  Plan,      ///< the planner's search for the scenario's model and cluster
};

struct EvaluationRequest {
  Json scenario;         ///< a scenario object (to_scenario of the form)
  std::string base_dir;  ///< where relative paths inside it resolve
  std::string origin;    ///< the file it came from, for messages ("" = the form)
  Job job = Job::Training;
  Action action = Action::Memory;
  std::int64_t serving_batch = 64;      ///< serving ledger: concurrent sequences per replica
  std::int64_t serving_context = 4096;  ///< serving ledger: tokens per sequence
  /// Called from the evaluating thread with a line of progress (plans only); may be empty.
  std::function<void(const std::string&)> progress;
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
  Json cost_provenance;                                ///< sim::CostSetup::provenance of that cost model
  std::optional<sim::train::TrainingResult> training;  ///< when simulated (graph kept, for the timeline)
  std::optional<sim::train::RunOutlook> training_outlook;  ///< goodput and cost of the simulated run
  std::optional<sim::serve::ServingResult> serving;    ///< when simulated (requests kept, for the CDF)
  /// The simulated iteration time at the edges of the profile's measured spread (when known).
  std::optional<sim::TimeRange> training_range;
  /// The 80% interval of whole steps from the profile's validation record (when it has one), and
  /// what it rests on (hw::ValidationError::summary).
  std::optional<sim::TimeRange> training_interval;
  std::string training_interval_note;
  /// The serving latencies at the edges of the measured spread (when known).
  std::optional<sim::ServingRange> serving_range;
  /// The 80% interval of TTFT / TPOT p50 from the profile's validation runs (when it applies).
  std::optional<sim::ServingInterval> serving_interval;
  /// A derived profile's caveat for the serving run (hw::derived_profile_caveat; "" when measured).
  std::string serving_caveat;
  /// How the spread was measured (the profile's spread.method; "" without one).
  std::string uncertainty;
  std::optional<plan::TrainPlan> train_plan;           ///< Plan on a training job
  std::optional<plan::ServePlan> serve_plan;           ///< Plan on a serving job
  /// Serving plan: the search as run (GPU budget, workload, SLOs), echoed in its JSON.
  std::optional<plan::ServeSearch> serve_search;

  /// `infraplan memory train|serve --json`: the ledger's to_json() plus the scenario name and
  /// the resolved training or serving config (and batch, context, kv_capacity_tokens).
  Json memory_json() const;
  /// `infraplan simulate train --json` (null when not simulated).
  Json training_json() const;
  /// `infraplan simulate serve --json` (null when not simulated).
  Json serving_json() const;
  /// `infraplan plan train|serve --json` (null when not planned).
  Json plan_json() const;
  /// Each JSON above is stamped like the CLI's (result_kind, result_version, provenance), so
  /// `infraplan report --from` and File › Export report read it.
  report::Provenance provenance(bool with_profile) const;
};

/// Parses and validates the scenario, builds the ledger and, when asked, simulates. Throws
/// infraplan::Error with the library's message (naming the field) on bad input.
std::shared_ptr<const Evaluation> evaluate(const EvaluationRequest& req);

/// The cost model the CLI uses for a scenario (simulator/cost_setup.hpp): its profile, else the
/// GPU's embedded profile, else the datasheet roofline.
using CostChoice = sim::CostSetup;
CostChoice scenario_cost_model(const strat::Scenario& sc);

}  // namespace infraplan::gui

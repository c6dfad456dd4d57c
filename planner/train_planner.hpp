#pragma once
// TrainingPlanner: searches the training layouts of a model on a cluster, ranks them with the
// fast analytical estimate, re-simulates the best with the discrete-event simulator and explains
// the ranking.
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/comm_model.hpp"
#include "hardware/cost_model.hpp"
#include "planner/train_space.hpp"
#include "simulator/training_goodput.hpp"
#include "simulator/training_sim.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::plan {

struct TrainPlanRequest {
  model::ModelSpec model;
  hw::Cluster cluster;
  TrainSearch search;
  int top = 5;              ///< candidates re-simulated and reported
  double train_tokens = 0;  ///< optional: tokens to train, for time-to-train and GPU-hours
  /// Tokens for goodput and cost when train_tokens is 0 (the scenario's training.train_tokens, or
  /// 20 per parameter); see sim::train::resolve_train_tokens.
  double default_train_tokens = 0;
  std::string default_train_tokens_source;
  std::uint64_t seed = 1;   ///< Monte Carlo seed of the goodput estimate
  bool simgrid = false;     ///< re-simulate on SimGrid instead of the event executor
  /// Price every layout at the clock the profile's power law gives it (--clock sustained;
  /// simulator/sustained_clock.hpp) instead of the GEMM tables' reference clock.
  bool sustained_clock = false;
  /// Called with (layouts visited, feasible so far) every few thousand layouts (progress line).
  std::function<void(std::int64_t, std::int64_t)> progress;
};

/// The question a scenario with a `training` object asks the planner (`infraplan plan train
/// --scenario`, a report's plan section, the GUI's planner): its model and cluster; the job's
/// sequence, global batch, precision and optimizer held fixed (the layout is the answer); its
/// training.train_tokens for goodput and cost; its seed. Throws infraplan::Error without `training`.
TrainPlanRequest train_plan_request_of(const strat::Scenario& sc);

struct TrainCandidate {
  strat::TrainingConfig cfg;
  double iteration_time_s = 0;  ///< simulated when `simulated`, else the analytical estimate
  double estimate_s = 0;        ///< analytical estimate (ranking key of the first pass)
  double tokens_per_s = 0;
  double mfu = 0;
  double peak_bytes = 0;
  bool simulated = false;
  sim::train::TimeBreakdown breakdown;
  std::vector<std::string> warnings;
  /// Time to train `train_tokens` (s) and GPU-hours; 0 when not asked.
  double time_to_train_s = 0, gpu_hours = 0;
  /// Failures, checkpoints and money over the whole run (listed candidates and alternatives).
  bool has_outlook = false;
  sim::train::RunOutlook outlook;
  /// Short layout label: "tp8 pp4 dp2 cp1 ep1 zero1 mb1 sel 1f1b".
  std::string label() const;
  Json to_json() const;
};

/// The best layout of a family the top list may not show ("best with pipeline parallelism").
struct TrainAlternative {
  std::string family;
  TrainCandidate candidate;
};

struct TrainPlan {
  std::vector<TrainCandidate> candidates;      ///< best first (simulated ones re-ranked by simulation)
  std::vector<TrainAlternative> alternatives;  ///< simulated best of other layout families
  Rejections rejected;
  std::int64_t layouts_visited = 0;  ///< feasible layouts estimated
  double search_seconds = 0;         ///< host wall time of the whole search
  double estimates_per_second = 0;
  std::vector<std::string> explanation;  ///< why the winner wins, why the runner-ups lose
  Json to_json() const;                  ///< {"best", "candidates", "alternatives", "rejected", ...}
};

TrainPlan plan_training(const TrainPlanRequest& r, const hw::CostModel& cost, const coll::CommModel& comm);

/// Sentences comparing `loser` with `winner` ("PP=16 loses 11% to bubble").
std::vector<std::string> explain_training(const TrainCandidate& winner, const TrainCandidate& loser,
                                          const hw::Cluster& c);

}  // namespace infraplan::plan

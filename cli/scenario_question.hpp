#pragma once
// The question a scenario file asks, answered in-process as the matching command would answer it
// with --json (same computation, same document, stamped with the equivalent command line):
//   - a "serving" object with a "workload": simulate serve;
//   - a "serving" object without one: memory serve (max_num_seqs sequences of the model's max_seq);
//   - a "training" object: simulate train, or memory train when the job does not fit in memory
//     (there is nothing to simulate then).
// and, on request, its plan: plan train over the scenario's model, cluster, sequence length and
// global batch; plan serve over its model, GPU, workload (one class), arrival rate and SLOs.
#include <string>
#include <vector>

#include "common/json_util.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::cli {

enum class Question { Auto, Memory, Simulate };
/// "auto", "memory" or "simulate"; throws naming `flag` otherwise.
Question parse_question(const std::string& name, const std::string& flag);

struct QuestionOptions {
  Question question = Question::Auto;
  bool roofline = false;       ///< datasheet roofline instead of the profile
  double train_tokens = 0;     ///< plan train: tokens to train (time-to-train, GPU-hours); 0 = none
  int top = 5;                 ///< plan train: candidates to re-simulate
  std::vector<int> serve_tps;  ///< plan serve: TP sizes to try (empty: the planner's default)
  int probe_requests = 300;    ///< plan serve: requests per capacity probe
};

/// The scenario's question as a result document (see cli/results.hpp).
Json answer_question(const strat::Scenario& sc, const QuestionOptions& o);

/// The scenario's plan as a result document. Throws infraplan::Error when the scenario lacks what
/// the planner needs (for serving: one request class with an arrival rate and both SLOs).
Json answer_plan(const strat::Scenario& sc, const QuestionOptions& o);

}  // namespace infraplan::cli

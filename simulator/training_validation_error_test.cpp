// The H200 profile's record of how far whole training steps fell from the model
// (validation_error.training_step, hardware/validation_error.hpp): measured / predicted over every
// step of the first LLaMA corpus (docs/data/h200_llama_corpus.json, 40 one-H200 steps in plain
// PyTorch, Hugging Face transformers and torch.compile), its 10th / 50th / 90th percentiles, and how
// many steps of the batches measured after it (unseen, fourth, fifth and sixth on two machine starts each; nothing
// was chosen on them) fall inside [p10, p90]. The test recomputes both with the model as it is and
// fails when the profile's record no longer describes it. To rewrite the record:
//   INFRAPLAN_WRITE_VALIDATION_ERROR=DIR build/bin/training_sim_tests --gtest_filter='*ValidationError*'
//   python3 bench/calib/validation_error_to_profile.py DIR/training_step.json
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hardware/calibrated_cost_model.hpp"
#include "hardware/profile.hpp"
#include "simulator/corpus_row_test_support.hpp"
#include "simulator/metrics.hpp"
#include "simulator/training_sim.hpp"

namespace infraplan::sim::train {
namespace {

/// measured / predicted step time of every measured row of a corpus file.
std::vector<double> step_ratios(const std::string& file) {
  const Json d = read_json_file(std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/" + file);
  hw::Cluster c = hw::cluster_preset("dgx-h200", 1);
  c.gpus_per_node = 1;
  coll::CommModel comm(c);
  auto cost = hw::make_calibrated_cost_model(c.gpu.name);
  std::vector<double> out;
  for (const auto& row : d.at("configs")) {
    if (!row.contains("step_seconds_median")) continue;
    const model::ModelSpec m = llama_of(row);
    const TrainingResult r = simulate_training(m, c, config_of(row, m, c), *cost, comm);
    out.push_back(row.at("step_seconds_median").get<double>() / r.iteration_time_s);
  }
  return out;
}

TEST(TrainingAccuracy, ValidationErrorOfTheProfileIsCurrent) {
  std::vector<double> fit = step_ratios("h200_llama_corpus.json");
  ASSERT_GE(fit.size(), 30u);
  std::sort(fit.begin(), fit.end());
  const double p10 = serve::quantile_of_sorted(fit, 0.1), p50 = serve::quantile_of_sorted(fit, 0.5),
               p90 = serve::quantile_of_sorted(fit, 0.9);
  int held = 0, inside = 0;
  for (const char* f : {"h200_llama_corpus_unseen.json", "h200_llama_corpus_fourth.json",
                        "h200_llama_corpus_fifth.json", "h200_llama_corpus_fifth_run2.json",
                        "h200_llama_corpus_sixth.json", "h200_llama_corpus_sixth_run2.json"})
    for (double r : step_ratios(f)) ++held, inside += (r >= p10 && r <= p90);
  const double coverage = double(inside) / double(held);
  std::printf(
      "training steps: measured / predicted p10 %.3f p50 %.3f p90 %.3f over %zu rows; %d of %d held-out rows "
      "inside\n",
      p10, p50, p90, fit.size(), inside, held);
  // An 80% interval should hold about 80% of rows it never saw; far less would mean the first
  // corpus does not represent later workloads.
  EXPECT_GE(coverage, 0.6);

  if (const char* dir = std::getenv("INFRAPLAN_WRITE_VALIDATION_ERROR")) {
    std::filesystem::create_directories(dir);
    const Json j = {
        {"kind", "training_step"},
        {"p10", p10},
        {"p50", p50},
        {"p90", p90},
        {"rows", int(fit.size())},
        {"what", "one-H200 PyTorch LLaMA-architecture training steps (eager, transformers, torch.compile)"},
        {"source", "docs/data/h200_llama_corpus.json, every row"},
        {"held_out_rows", held},
        {"held_out_coverage", coverage},
        {"held_out_source",
         "docs/data/h200_llama_corpus_{unseen,fourth,fifth,fifth_run2,sixth,sixth_run2}.json (measured later, never fitted)"},
        {"command", "training_sim_tests --gtest_filter='*ValidationError*'"}};
    std::ofstream(std::string(dir) + "/training_step.json") << j.dump(1) << "\n";
    return;
  }
  const hw::Profile& p = hw::default_profile("h200-sxm-141gb");
  const auto it = p.validation_error.find("training_step");
  ASSERT_NE(it, p.validation_error.end()) << "the H200 profile records no validation_error.training_step";
  const hw::ValidationError& v = it->second;
  const char* how =
      " (the model moved: rewrite the record, see simulator/training_validation_error_test.cpp)";
  EXPECT_EQ(v.rows, int(fit.size())) << how;
  EXPECT_NEAR(v.p10, p10, 0.005) << how;
  EXPECT_NEAR(v.p50, p50, 0.005) << how;
  EXPECT_NEAR(v.p90, p90, 0.005) << how;
  EXPECT_EQ(v.held_out_rows, held) << how;
  EXPECT_NEAR(v.held_out_coverage, coverage, 0.03) << how;
}

}  // namespace
}  // namespace infraplan::sim::train

// The H200 profile's record of how far whole training steps fell from the model
// (validation_error.training_step, hardware/validation_error.hpp): measured / predicted over every
// step of the first LLaMA corpus (docs/data/h200_llama_corpus.json, 40 one-H200 steps in plain
// PyTorch, Hugging Face transformers and torch.compile), its 10th / 50th / 90th percentiles, and how
// many steps of the batches measured after it (unseen, fourth, fifth and sixth on two machine starts each;
// nothing was chosen on them) fall inside [p10, p90]. The test recomputes both with the model as it is and
// fails when the profile's record no longer describes it. To rewrite the record:
//   INFRAPLAN_WRITE_VALIDATION_ERROR=DIR build/bin/training_sim_tests --gtest_filter='*ValidationError*'
//   python3 bench/calib/validation_error_to_profile.py hardware/profiles/h200-sxm-141gb.json
//   DIR/training_step.json
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "hardware/calibrated_cost_model.hpp"
#include "hardware/profile.hpp"
#include "hardware/validation_error_test_support.hpp"
#include "simulator/corpus_row_test_support.hpp"
#include "simulator/training_sim.hpp"

namespace infraplan::sim::train {
namespace {

/// measured / predicted step time of every measured row of a corpus file, on the GPU it ran on.
std::vector<double> step_ratios(const std::string& file) {
  const Json d = read_json_file(std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/" + file);
  const hw::Cluster c = one_gpu_of(d);
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

/// The record of one profile's training steps: quantiles over `fit_file`'s rows, coverage of every
/// held-out file's rows (printed per file), written with INFRAPLAN_WRITE_VALIDATION_ERROR (under
/// `subdir`) or checked against the profile of `gpu`.
void check_training_record(const std::string& gpu, const std::string& fit_file,
                           const std::vector<std::string>& held_files, const std::string& what,
                           const hw::ValidationErrorSources& sources, const std::string& subdir) {
  const std::vector<double> fit = step_ratios(fit_file);
  ASSERT_GE(fit.size(), 30u);
  std::vector<double> held;
  std::vector<std::vector<double>> by_file;
  for (const std::string& f : held_files) {
    by_file.push_back(step_ratios(f));
    held.insert(held.end(), by_file.back().begin(), by_file.back().end());
  }
  ASSERT_GE(held.size(), 30u);
  const hw::ValidationError v = hw::validation_error_of(fit, held, what);
  for (std::size_t i = 0; i < held_files.size(); ++i) {
    int below = 0, above = 0;
    for (double r : by_file[i]) {
      if (r < v.p10) ++below;
      if (r > v.p90) ++above;
    }
    std::printf("  %s: %zu rows, %zu inside, %d below p10, %d above p90\n", held_files[i].c_str(),
                by_file[i].size(), by_file[i].size() - std::size_t(below + above), below, above);
  }
  std::printf(
      "%s: measured / predicted p10 %.3f p50 %.3f p90 %.3f over %d rows; %ld of %d held-out rows inside\n",
      gpu.c_str(), v.p10, v.p50, v.p90, v.rows, std::lround(v.held_out_coverage * v.held_out_rows),
      v.held_out_rows);
  // An 80% interval should hold about 80% of rows it never saw; far less would mean the first
  // corpus does not represent later workloads.
  EXPECT_GE(v.held_out_coverage, 0.6);
  if (hw::write_validation_error_record("training_step", v, sources, subdir)) return;
  expect_validation_error_current(hw::default_profile(gpu), "training_step", v, 0.03,
                                  "simulator/training_validation_error_test.cpp");
}

TEST(TrainingAccuracy, ValidationErrorOfTheProfileIsCurrent) {
  check_training_record(
      "h200-sxm-141gb", "h200_llama_corpus.json",
      {"h200_llama_corpus_unseen.json", "h200_llama_corpus_fourth.json", "h200_llama_corpus_fifth.json",
       "h200_llama_corpus_fifth_run2.json", "h200_llama_corpus_sixth.json",
       "h200_llama_corpus_sixth_run2.json"},
      "one-H200 PyTorch LLaMA-architecture training steps (eager, transformers, torch.compile)",
      {"docs/data/h200_llama_corpus.json, every row",
       "docs/data/h200_llama_corpus_{unseen,fourth,fifth,fifth_run2,sixth,sixth_run2}.json (measured later, "
       "never "
       "fitted)",
       "training_sim_tests --gtest_filter='*ValidationError*'"},
      "");
}

// The H100 profile is derived from the H200's (hardware/profile_derive.cpp), but its record is the
// H100's own: measured / predicted over the first corpus's configurations as one H100 ran them
// (docs/data/h100_llama_corpus.json, 30 steps), checked on every H100 step
// measured after it (the tenth batch, the ninth on both attention kernels, op-level checkpointing on
// three machine starts; nothing was chosen on them). The derived file keeps this record when it is
// regenerated (Profile.DerivedFilesAreUpToDate). To rewrite it:
//   INFRAPLAN_WRITE_VALIDATION_ERROR=DIR build/bin/training_sim_tests --gtest_filter='*ValidationError*'
//   python3 bench/calib/validation_error_to_profile.py hardware/profiles/h100-sxm5-80gb.json
//     DIR/h100-sxm5-80gb/training_step.json   (one command line), then
//   INFRAPLAN_REGENERATE_PROFILES=1 build/bin/hardware_tests --gtest_filter='*DerivedFilesAreUpToDate*'
//   (writes the derived file again in its own number format, the record kept)
TEST(TrainingAccuracy, ValidationErrorOfTheH100ProfileIsItsOwn) {
  check_training_record(
      "h100-sxm5-80gb", "h100_llama_corpus.json",
      {"h100_llama_corpus_tenth.json", "h100_llama_corpus_ninth_cudnn.json",
       "h100_llama_corpus_ninth_flash.json", "h100_llama_corpus_sac.json", "h100_llama_corpus_sac_run2.json",
       "h100_llama_corpus_sac_run3.json"},
      "one-H100 PyTorch LLaMA-architecture training steps (eager, transformers, torch.compile)",
      {"docs/data/h100_llama_corpus.json, every row",
       "docs/data/h100_llama_corpus_{tenth,ninth_cudnn,ninth_flash,sac,sac_run2,sac_run3}.json (measured "
       "later, "
       "never fitted)",
       "training_sim_tests --gtest_filter='*ValidationError*'"},
      "h100-sxm5-80gb");
}

}  // namespace
}  // namespace infraplan::sim::train

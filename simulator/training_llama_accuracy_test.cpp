// Predicted vs measured LLaMA-architecture training steps on one H200 (docs/data/h200_llama_corpus.json,
// bench/pytorch/llama_corpus.py): plain PyTorch (framework pytorch-eager), Hugging Face
// transformers (transformers) and torch.compile (torch-compile); AMP bf16 and pure bf16;
// checkpointing per block on and off; 0.4B–8B, GQA 1–16 query heads per KV head, vocabularies
// 32k–152k, sequences 1k–8k. Step time from the simulator with the H200's embedded profile, memory
// from the ledger without the CUDA context. Rows marked "fit" may inform calibration (their
// profiler traces showed which kernels a step runs); "validation" rows may not. Nothing is fitted
// to either. The tables go to docs/accuracy.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>

#include "common/error.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/clocked_cost_model.hpp"
#include "simulator/corpus_row_test_support.hpp"
#include "simulator/training_sim.hpp"
#include "strategies/work_graph.hpp"

namespace infraplan::sim::train {
namespace {

struct Split {
  double step = 0, memory = 0, step_max = 0, memory_max = 0;
  int n = 0;
};

// Predicted vs measured for every row of a corpus file (bench/pytorch/llama_corpus.py output),
// printed as a table; the errors by "fit", "validation" and "<split>/<framework>". Empty when the
// file is absent.
// `profile` (optional) prices the rows instead of the GPU's embedded profile.
std::map<std::string, Split> corpus_errors(const std::string& file,
                                           const std::optional<hw::Profile>& profile = {}) {
  std::map<std::string, Split> by;
  const std::string path = std::string(INFRAPLAN_SOURCE_DIR) + file;
  if (!std::filesystem::exists(path)) return by;
  const Json d = read_json_file(path);
  const hw::Cluster c = one_gpu_of(d);
  coll::CommModel comm(c);
  auto cost = profile ? std::make_unique<hw::CalibratedCostModel>(*profile, hw::find_gpu(c.gpu.name))
                      : hw::make_calibrated_cost_model(c.gpu.name);
  std::printf(
      "| framework | model | precision | checkpointing | micro-batch | seq | split | measured step | "
      "predicted | "
      "error | measured memory | predicted | error "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& row : d.at("configs")) {
    if (!row.contains("step_seconds_median")) continue;
    const model::ModelSpec m = llama_of(row);
    const strat::TrainingConfig t = config_of(row, m, c);
    const TrainingResult r = simulate_training(m, c, t, *cost, comm);
    const double meas_t = row.at("step_seconds_median").get<double>();
    const double meas_m = row.at("max_memory_allocated_bytes").get<double>();
    const double pred_m = r.peak_bytes - r.ledger.line("cuda_context") - r.ledger.line("nccl_buffers");
    const double et = (r.iteration_time_s - meas_t) / meas_t, em = (pred_m - meas_m) / meas_m;
    const std::string split = row.at("split").get<std::string>();
    const std::string fw = strat::framework_name(t.framework);
    std::printf("| %s | %s | %s | %s | %lld | %lld | %s | %.1f ms | %.1f ms | %+.1f%% | %.2f GiB | %.2f GiB | %+.1f%% |\n",
                fw.c_str(), m.name.c_str(), strat::precision_name(t.precision),
                row.at("checkpointing").get<std::string>().c_str(), (long long)t.micro_batch,
                (long long)t.seq_len, split.c_str(), 1e3 * meas_t, 1e3 * r.iteration_time_s, 100 * et,
                meas_m / 1073741824.0, pred_m / 1073741824.0, 100 * em);
    for (const std::string& k : {split, split + "/" + fw}) {
      Split& s = by[k];
      s.step += std::abs(et), s.memory += std::abs(em), ++s.n;
      s.step_max = std::max(s.step_max, std::abs(et)), s.memory_max = std::max(s.memory_max, std::abs(em));
    }
  }
  for (auto& [k, s] : by)
    std::printf("%-28s n=%2d step mean |error| %5.1f%% max %5.1f%% | memory mean %5.1f%% max %5.1f%%\n", k.c_str(),
                s.n, 100 * s.step / s.n, 100 * s.step_max, 100 * s.memory / s.n, 100 * s.memory_max);
  return by;
}

TEST(TrainingAccuracy, LlamaCorpusOnH200) {
  std::map<std::string, Split> by = corpus_errors("/docs/data/h200_llama_corpus.json");
  if (by.empty()) GTEST_SKIP() << "no corpus data";
  const Split& v = by["validation"];
  ASSERT_GT(v.n, 20);
  // Targets (issue: mean <= 10%, max <= 20% on step time and memory). Run of 2026-12-01: see
  // docs/accuracy.md; the bounds guard today's numbers with a margin for the measurements' own
  // machine-to-machine spread of host-bound steps (up to 16% between two machine starts).
  EXPECT_LT(v.step / v.n, 0.08);
  // Memory with the saved tensors counted as measured and the checkpointed phases (2026-12-03):
  // 1.1% mean, 6.2% max (2.7% / 11.2% before).
  EXPECT_LT(v.memory / v.n, 0.04);
  EXPECT_LT(v.memory_max, 0.12);
  // torch.compile with the compiled RoPE rows and the compiled block's host cost (2026-12-03):
  // 4.4% mean, 6.1% max over its validation rows (10.6% / 12.5% before).
  const Split& vc = by["validation/torch-compile"];
  ASSERT_GE(vc.n, 3);
  EXPECT_LT(vc.step / vc.n, 0.08);
  EXPECT_LT(v.step_max, 0.25);
  EXPECT_LT(v.memory_max, 0.25);
}

// A batch measured as validation only: `n` rows, none of them fit rows, and the issue's bounds on
// its means (step time and peak memory, 10%) and on its largest memory error (20%).
void expect_validation_batch(std::map<std::string, Split>& by, int n) {
  const Split& v = by["validation"];
  ASSERT_EQ(v.n, n);
  EXPECT_EQ(by.count("fit"), 0u);
  EXPECT_LT(v.step / v.n, 0.10);
  EXPECT_LT(v.memory / v.n, 0.10);
  EXPECT_LT(v.memory_max, 0.20);
}

// The third batch (bench/pytorch/llama_corpus.py --unseen, docs/data/h200_llama_corpus_unseen.json):
// 13 configurations no earlier batch has, measured on another machine start after every framework's
// model was complete; validation only. The issue's bounds: mean <= 10%, max <= 20%, step and memory.
// One 13-row validation batch measured on several machine starts (one file each): the batch's
// bounds on every start, and every row's step time within 20%.
void expect_batch_of_starts(std::initializer_list<const char*> files) {
  for (const char* file : files) {
    std::map<std::string, Split> by = corpus_errors(file);
    if (by.empty()) GTEST_SKIP() << "no corpus data";
    expect_validation_batch(by, 13);
    EXPECT_LT(by["validation"].step_max, 0.20) << file;
  }
}

TEST(TrainingAccuracy, LlamaCorpusUnseenBatch) {
  std::map<std::string, Split> by = corpus_errors("/docs/data/h200_llama_corpus_unseen.json");
  if (by.empty()) GTEST_SKIP() << "no corpus data";
  expect_validation_batch(by, 13);
  EXPECT_LT(by["validation"].step_max, 0.20);
}

// The fourth batch (bench/pytorch/llama_corpus.py --fourth, docs/data/h200_llama_corpus_fourth.json):
// 13 more configurations no earlier batch has, measured on another machine start after the host's
// per-op issue and the strided RoPE were committed (the model predicted them before they ran);
// validation only. As predicted, one host-bound transformers row (llama-0.4b pure bf16, 4 x 2048)
// was +26.9%; with the block host costs the median of four machine starts (merged together with the
// fifth batch) it is +17.8% (docs/accuracy.md tells both). The issue's bounds: 20% on every row.
TEST(TrainingAccuracy, LlamaCorpusFourthBatch) {
  std::map<std::string, Split> by = corpus_errors("/docs/data/h200_llama_corpus_fourth.json");
  if (by.empty()) GTEST_SKIP() << "no corpus data";
  expect_validation_batch(by, 13);
  EXPECT_LT(by["validation"].step_max, 0.20);
}

// The fifth batch (bench/pytorch/llama_corpus.py --fifth, docs/data/h200_llama_corpus_fifth.json):
// five model shapes no earlier batch has (SmolLM-360M and SmolLM2-1.7B with head width 64, Qwen2.5-3B,
// Yi-6B, DeepSeek-LLM-7B) in plain PyTorch, transformers and torch.compile, predicted by the committed
// model before it ran (docs/data/h200_llama_corpus_fifth_predicted.json), on another machine start;
// validation only. The same batch again on a second machine start (h200_llama_corpus_fifth_run2.json).
// The issue's bounds on every row: 20% step and memory.
TEST(TrainingAccuracy, LlamaCorpusFifthBatch) {
  expect_batch_of_starts(
      {"/docs/data/h200_llama_corpus_fifth.json", "/docs/data/h200_llama_corpus_fifth_run2.json"});
}

// A sixth batch, predicted (with its 80% intervals) before it ran on 2026-12-04
// (docs/data/h200_llama_corpus_sixth_predicted.json): head width 80, InternLM2-1.8B, MiniCPM-2B with
// its odd vocabulary, Qwen2.5-7B, a 16k-token sequence. Runs of 2026-12-04 on two machine starts,
// against the model with the backward tables timed as GPU time: step 3.4% / 4.5% mean, 7.3% / 19.9%
// max (transformers Danube checkpointed, host-bound: its steps spread 196-260 ms on the second start);
// memory 0.6% mean, 3.0% max.
TEST(TrainingAccuracy, LlamaCorpusSixthBatch) {
  expect_batch_of_starts(
      {"/docs/data/h200_llama_corpus_sixth.json", "/docs/data/h200_llama_corpus_sixth_run2.json"});
}

// torch.compile steps measured on another machine start than the calibration (2026-12-03 10:41,
// bench/pytorch/trace_sweep.py --impl compile; docs/data/h200_compile_llama04b_sweep.json and a
// calibration-shaped model, h200_compile_custom_sweep.json, with checkpointing per block
// h200_compile_custom_ckpt_sweep.json). Steps whose host time stayed below
// 90% of the step are the GPU's and must be within 10%; host-bound ones follow the host's pace
// that day (it drifted by 50% within the run: docs/accuracy.md) and are printed only.
// A seventh batch, predicted (with its 80% intervals) before it ran on 2026-12-04 by the model with
// the eager kernels at the tables' clock (docs/data/h200_llama_corpus_seventh_predicted.json):
// Phi-3-mini, Yi-1.5-9B, CodeLlama-7B and DeepSeek-Coder-1.3B shapes, on two machine starts. As
// predicted: step time 3.2% / 3.0% mean, 7.7% / 6.6% max; 13 of 13 inside their intervals on both.
TEST(TrainingAccuracy, LlamaCorpusSeventhBatch) {
  expect_batch_of_starts(
      {"/docs/data/h200_llama_corpus_seventh.json", "/docs/data/h200_llama_corpus_seventh_run2.json"});
}

// An eighth batch (bench/pytorch/llama_corpus.py --eighth, 2026-12-05, validation only): sequences of
// 8k-32k tokens, where attention is a large share of the step, each configuration run on cuDNN's
// kernels (SDPA forced; the profile's default tables) and on SDPA's FlashAttention-2 backend
// (training.attention_kernel flash2, the tables of bench/pytorch/attention_backends.py), on two
// machine starts. A ninth batch (--ninth: grouped-query attention, 4k-32k tokens) on both kernels,
// predicted before it ran (docs/data/h200_llama_corpus_ninth_{cudnn,flash}_predicted.json). The
// flash steps are 12-30% slower; the model must see that from the kernel tables alone, within the
// issue's bounds on every file.
/// Every file: `n` validation rows within the issue's bounds (means 10%, every row 20%), step and memory.
void expect_files_within_bounds(std::initializer_list<const char*> files, int n) {
  for (const char* file : files) {
    std::map<std::string, Split> by = corpus_errors(file);
    ASSERT_FALSE(by.empty()) << file;
    const Split& v = by["validation"];
    EXPECT_EQ(v.n, n) << file;
    EXPECT_LT(v.step / v.n, 0.10) << file;
    EXPECT_LT(v.step_max, 0.20) << file;
    EXPECT_LT(v.memory / v.n, 0.10) << file;
    EXPECT_LT(v.memory_max, 0.20) << file;
  }
}

TEST(TrainingAccuracy, LongSequencesOnTwoAttentionKernels) {
  expect_files_within_bounds(
      {"/docs/data/h200_llama_corpus_eighth_cudnn.json", "/docs/data/h200_llama_corpus_eighth_flash.json",
       "/docs/data/h200_llama_corpus_eighth_cudnn_run2.json",
       "/docs/data/h200_llama_corpus_eighth_flash_run2.json", "/docs/data/h200_llama_corpus_ninth_cudnn.json",
       "/docs/data/h200_llama_corpus_ninth_flash.json"},
      6);
}

// The ninth batch on an H100 (2026-12-05 18:29 UTC, GPU-20c05664, both kernels, validation only; the
// derived H100 profile: cuDNN's tables and FlashAttention-2's carried from the H200): four rows of
// 4k-32k tokens; Qwen2.5-1.5B at 2 x 16k (AMP) and Llama-3-8B at 16k (pure bf16) ran out of the 80 GB
// although the ledger puts their allocated peak at 79.2 and 73.0 GiB of 79.6 (docs/accuracy.md). The
// issue's bounds on each file.
TEST(TrainingAccuracy, LongSequencesOnAnH100) {
  expect_files_within_bounds(
      {"/docs/data/h100_llama_corpus_ninth_cudnn.json", "/docs/data/h100_llama_corpus_ninth_flash.json"}, 4);
}

// Op-level selective checkpointing (--sac, validation only): torchtitan's policy through
// torch.utils.checkpoint on LLaMA-architecture blocks in plain PyTorch and transformers, measured on
// three H100 machine starts (2026-12-05 14:51, 15:11 and 17:58 UTC; the derived H100 profile,
// recompute "selective-op", its blocks' host cost as calibrate_framework.py measured it on tiny
// shapes: framework.block_host_us "…/selective-op"). The issue's bounds on each, and every row
// within 10% (2.5%, 4.0%, 4.1%; max 9.0%).
TEST(TrainingAccuracy, SelectiveOpCheckpointingBatchOnAnH100) {
  for (const char* file : {"/docs/data/h100_llama_corpus_sac.json", "/docs/data/h100_llama_corpus_sac_run2.json",
                           "/docs/data/h100_llama_corpus_sac_run3.json"}) {
    std::map<std::string, Split> by = corpus_errors(file);
    ASSERT_FALSE(by.empty()) << file;
    expect_validation_batch(by, 7);
    EXPECT_LT(by["validation"].step_max, 0.10) << file;
  }
}

// The same batch on a fourth H100 start (2026-12-06 02:40 UTC, GPU-19723cd6), whose host ran the
// policy faster than the calibration's: with the embedded profile 6.4% mean, max 15.7% (transformers
// Llama-3.2-1B, +15.7%: the model slow). The same start also timed the blocks under the policy
// (calibrate_framework.py --llama-blocks-only, docs/data/h100_pytorch_llama_block_host_sac_run3.json):
// priced with that start's own selective-op block entries, every row within 10% (3.3%, max 6.3%).
// The pricing holds where the host is calibrated; the embedded entries carry other hosts' pace.
TEST(TrainingAccuracy, SelectiveOpCheckpointingWithTheSameStartsBlockHost) {
  const char* file = "/docs/data/h100_llama_corpus_sac_run4.json";
  std::map<std::string, Split> by = corpus_errors(file);
  ASSERT_FALSE(by.empty());
  expect_validation_batch(by, 7);
  EXPECT_LT(by["validation"].step_max, 0.20);
  // The H100 profile with its selective-op block entries replaced by that start's run.
  hw::Profile prof = hw::default_profile("h100-sxm5-80gb");
  ASSERT_TRUE(prof.framework.has_value());
  const Json run = read_json_file(std::string(INFRAPLAN_SOURCE_DIR) +
                                  "/docs/data/h100_pytorch_llama_block_host_sac_run3.json");
  int replaced = 0;
  for (const auto& [key, e] : run.at("llama_block_host_us").items())
    if (key.ends_with("/selective-op")) {
      auto entry = prof.framework->block_us.find(key);
      ASSERT_NE(entry, prof.framework->block_us.end()) << key;
      entry->second = {e.at("forward_us").get<double>(), e.at("backward_us").get<double>()};
      ++replaced;
    }
  ASSERT_EQ(replaced, 4);
  std::map<std::string, Split> own = corpus_errors(file, prof);
  expect_validation_batch(own, 7);
  EXPECT_LT(own["validation"].step_max, 0.10);
  EXPECT_LT(own["validation"].step, by["validation"].step);
}

// The same batch on an H200 (2026-12-05 21:44 UTC, GPU-0099ad6b), predicted and committed before it
// ran (docs/data/h200_llama_corpus_sac_predicted.json: 15.8% mean, max 34.3%, every row fast). The
// rows are bound by the host (its time 66-100% of the step), which on this machine ran the policy
// slower than on the H100s; with the policy's block host cost priced, 12.2% (max 26.4%). Not within
// the issue's bounds: the test holds the documented state so that a change shows (docs/accuracy.md).
TEST(TrainingAccuracy, SelectiveOpCheckpointingBatchOnTheH200) {
  std::map<std::string, Split> by = corpus_errors("/docs/data/h200_llama_corpus_sac.json");
  ASSERT_FALSE(by.empty());
  const Split& v = by["validation"];
  ASSERT_EQ(v.n, 7);
  EXPECT_LT(v.step / v.n, 0.13);
  EXPECT_LT(v.step_max, 0.27);
  EXPECT_LT(v.memory / v.n, 0.10);
}

// The first corpus's configurations on an H100 (2026-12-05 14:52 UTC, 30 of its 40 rows in the
// time the machine had), predicted with the derived H100 profile before any H100 ran them
// (docs/data/h100_llama_corpus_predicted.json). The issue's bounds on the validation rows.
TEST(TrainingAccuracy, LlamaCorpusOnAnH100) {
  std::map<std::string, Split> by = corpus_errors("/docs/data/h100_llama_corpus.json");
  ASSERT_FALSE(by.empty());
  const Split& v = by["validation"];
  EXPECT_EQ(v.n, 24);
  EXPECT_LT(v.step / v.n, 0.10);
  EXPECT_LT(v.step_max, 0.20);
  EXPECT_LT(v.memory / v.n, 0.10);
  EXPECT_LT(v.memory_max, 0.20);
}

// The tenth batch (bench/pytorch/llama_corpus.py --tenth: Granite-3-2B, StableLM-2-1.6B, OLMo-1B,
// Llama-3.2-3B and Llama-2-13B shapes in plain PyTorch, transformers and torch.compile), predicted for
// the H200 before any run (docs/data/h200_llama_corpus_tenth_predicted.json), then run on an H100
// (2026-12-05 17:59 UTC; Llama-2-13B in pure bf16 did not fit its 80 GB, as the ledger says of it) and
// priced with the derived H100 profile, the model unchanged since. Validation only; the issue's bounds
// and every row within 20%.
TEST(TrainingAccuracy, LlamaCorpusTenthBatchOnAnH100) {
  std::map<std::string, Split> by = corpus_errors("/docs/data/h100_llama_corpus_tenth.json");
  ASSERT_FALSE(by.empty());
  expect_validation_batch(by, 9);
  EXPECT_LT(by["validation"].step_max, 0.20);
}

// The same tenth batch on an H200 (2026-12-05 21:44 UTC, GPU-0099ad6b), every row predicted and
// committed before it ran (docs/data/h200_llama_corpus_tenth_predicted.json; the model unchanged
// since): Llama-2-13B in pure bf16 ran here (97.2 GiB). Validation only; the issue's bounds and every
// row within 20%.
TEST(TrainingAccuracy, LlamaCorpusTenthBatchOnTheH200) {
  std::map<std::string, Split> by = corpus_errors("/docs/data/h200_llama_corpus_tenth.json");
  ASSERT_FALSE(by.empty());
  expect_validation_batch(by, 10);
  EXPECT_LT(by["validation"].step_max, 0.20);
}

TEST(TrainingAccuracy, CompiledStepsOfAnotherMachineStart) {
  const hw::Cluster c = one_h200();
  coll::CommModel comm(c);
  auto cost = hw::make_calibrated_cost_model(c.gpu.name);
  int gpu_bound = 0;
  for (const char* f :
       {"/docs/data/h200_compile_llama04b_sweep.json", "/docs/data/h200_compile_custom_sweep.json",
        "/docs/data/h200_compile_custom_ckpt_sweep.json"}) {
    const std::string path = std::string(INFRAPLAN_SOURCE_DIR) + f;
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
    const Json data = read_json_file(path);
    for (const auto& row : data.at("configs")) {
      if (!row.contains("step_seconds_median")) continue;
      const model::ModelSpec m = llama_of(row);
      const strat::TrainingConfig t = config_of(row, m, c);
      ASSERT_EQ(t.framework, strat::Framework::TorchCompile);
      const double meas = row.at("step_seconds_median").get<double>();
      const double host = row.at("host_seconds_median").get<double>();
      const double err = simulate_training(m, c, t, *cost, comm).iteration_time_s / meas - 1;
      const bool bound = host < 0.9 * meas;
      std::printf("%s %s%s mb %lld seq %lld: measured %.1f ms (host %.1f ms, %s), error %+.1f%%\n",
                  m.name.c_str(), strat::precision_name(t.precision),
                  t.recompute == model::Recompute::Full ? " checkpointed" : "", (long long)t.micro_batch,
                  (long long)t.seq_len, 1e3 * meas, 1e3 * host, bound ? "GPU-bound" : "host-bound",
                  100 * err);
      if (bound) {
        ++gpu_bound;
        EXPECT_LT(std::abs(err), 0.10) << m.name << " mb " << t.micro_batch << " seq " << t.seq_len;
      }
    }
  }
  EXPECT_GE(gpu_bound, 5);
}

// A compiled configuration whose block host time the profile did not measure has no host floor:
// the result says so instead of passing a host-bound prediction silently. The embedded profile
// measured the checkpointed compiled block; a profile without it warns.
TEST(TrainingAccuracy, CompiledStepWithoutAMeasuredBlockWarns) {
  const hw::Cluster c = one_h200();
  coll::CommModel comm(c);
  auto cost = hw::make_calibrated_cost_model(c.gpu.name);
  Json j = read_json_file(std::string(INFRAPLAN_SOURCE_DIR) + "/hardware/profiles/h200-sxm-141gb.json");
  j["framework"]["block_host_us"].erase("torch-compile/amp-bf16/checkpointed");
  const hw::CalibratedCostModel without(hw::parse_profile(j, "without_block.json"), c.gpu);
  const model::ModelSpec m = model::preset("llama3-8b");
  strat::TrainingConfig t;
  t.seq_len = 2048, t.micro_batch = 1, t.global_batch = 1;
  t.precision = strat::Precision::AmpBF16, t.framework = strat::Framework::TorchCompile;
  t.recompute = model::Recompute::Full;
  strat::resolve_training(t, m, c);
  auto warned = [&](const TrainingResult& r) {
    for (const auto& w : r.warnings)
      if (w.find("no measured host time of a compiled block") != std::string::npos) return true;
    return false;
  };
  EXPECT_FALSE(warned(simulate_training(m, c, t, *cost, comm)));
  EXPECT_TRUE(warned(simulate_training(m, c, t, without, comm)));
}

// The clock of a training step under the board's power limit: the power law and the limiter's
// averaging time (fitted on the calibrator's sustained-load workloads and mixtures, none of them a
// training step) walking the simulated step, against the SM clock sampled
// beside 18 corpus configurations (docs/data/h200_corpus_step_clocks*.json, each measured right after
// a run of the power probe on the same machine).
TEST(TrainingAccuracy, SustainedClockOfCorpusSteps) {
  Json rows = Json::array();
  for (const char* f : {"/docs/data/h200_corpus_step_clocks.json", "/docs/data/h200_corpus_step_clocks2.json"}) {
    const std::string path = std::string(INFRAPLAN_SOURCE_DIR) + f;
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
    const Json d = read_json_file(path);
    for (const auto& r : d.at("configs")) rows.push_back(r);
  }
  const hw::Cluster c = one_h200();
  coll::CommModel comm(c);
  auto cost = hw::make_calibrated_cost_model(c.gpu.name);
  ASSERT_NE(cost->power_model(), nullptr);
  {
    const auto& p = cost->power_model()->params();
    std::printf("law: P0 %.0f W, %.3f W per 16-bit TFLOP/s, %.3f per 8-bit, %.1f W per TB/s copied, %.1f W per TB/s "
                "elementwise, exponent %.2f\n",
                p.base_w, p.w_per_tflops16, p.w_per_tflops8, p.w_per_TBps, p.w_per_ew_TBps, p.exponent);
  }
  std::printf("| framework | model | precision | checkpointing | micro-batch | seq | measured clock | predicted | error | "
              "measured power | predicted | measured step | predicted | error | at the tables' clock | at the measured "
              "clock |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  double sum = 0, worst = 0, step_sum = 0, ref_sum = 0, meas_sum = 0;
  int n = 0;
  for (const auto& row : rows) {
    if (!row.contains("sm_clock_mhz")) continue;
    const model::ModelSpec m = llama_of(row);
    const strat::TrainingConfig t = config_of(row, m, c);
    TrainingOptions sustained;
    sustained.sustained_clock = true;
    const TrainingResult r = simulate_training(m, c, t, *cost, comm, sustained);
    const TrainingResult at_ref = simulate_training(m, c, t, *cost, comm);
    ASSERT_TRUE(r.clock.has_value());
    const double meas = row.at("sm_clock_mhz").at("mean").get<double>();
    // Diagnostic: the step priced at the clock it was measured at (what a perfect clock gives).
    const hw::ClockedCostModel at_meas_cost(*cost, meas);
    const TrainingResult at_meas = simulate_training(m, c, t, at_meas_cost, comm);
    const double err = r.clock->mhz / meas - 1;
    const double meas_t = row.at("step_seconds_median").get<double>();
    const double et = r.iteration_time_s / meas_t - 1, er = at_ref.iteration_time_s / meas_t - 1,
                 em = at_meas.iteration_time_s / meas_t - 1;
    std::printf("| %s | %s | %s | %s | %lld | %lld | %.0f MHz | %.0f MHz | %+.1f%% | %.0f W | %.0f W | %.1f ms | "
                "%.1f ms | %+.1f%% | %+.1f%% | %+.1f%% |\n",
                strat::framework_name(t.framework), m.name.c_str(), strat::precision_name(t.precision),
                row.at("checkpointing").get<std::string>().c_str(), (long long)t.micro_batch, (long long)t.seq_len,
                meas, r.clock->mhz, 100 * err, row.at("power_w_mean").get<double>(), r.clock->power_w, 1e3 * meas_t,
                1e3 * r.iteration_time_s, 100 * et, 100 * er, 100 * em);
    sum += std::abs(err), worst = std::max(worst, std::abs(err)), step_sum += std::abs(et), ref_sum += std::abs(er);
    meas_sum += std::abs(em);
    ++n;
  }
  ASSERT_GE(n, 16);
  std::printf("clock mean |error| %.1f%%, max %.1f%% over %d steps; step mean |error| %.1f%% (at the tables' "
              "clock: %.1f%%; at the measured clock: %.1f%%)\n",
              100 * sum / n, 100 * worst, n, 100 * step_sum / n, 100 * ref_sum / n, 100 * meas_sum / n);
  // The limiter walking each step's timeline (2026-12-02; docs/accuracy.md, "Clock under the power
  // limit"): mean 3.8%, max 7.5% (the law on the step's average demand: 5.8%, 10.7%). The bound
  // guards today's numbers with a margin.
  EXPECT_LT(sum / n, 0.05);
  EXPECT_LT(worst, 0.10);
  // The step at the limiter's clock, eager kernels slowed by their clock shares (2026-12-04: 3.8%;
  // before the shares 4.6%, at the tables' clock 4.1%).
  EXPECT_LT(step_sum / n, 0.042);
}

// An eager step whose host is faster than its GPU over each pass still waits for it where the
// host falls behind: at the step's start and in bursts of small kernels. With the host's per-op
// issue the step is longer than its GPU work alone, and much shorter than GPU and host added.
TEST(TrainingHostIssue, AGpuBoundEagerStepWaitsOnlyWhereTheHostFallsBehind) {
  const hw::Cluster c = one_h200();
  coll::CommModel comm(c);
  auto cost = hw::make_calibrated_cost_model(c.gpu.name);
  const model::ModelSpec m = model::preset("llama3-8b");
  strat::TrainingConfig t;
  t.seq_len = 2048, t.micro_batch = 1, t.global_batch = 1;
  t.precision = strat::Precision::BF16Pure, t.framework = strat::Framework::PytorchEager;
  t.host_dispatch = strat::HostDispatch::Off;
  strat::resolve_training(t, m, c);
  const double gpu_only = simulate_training(m, c, t, *cost, comm).iteration_time_s;
  t.host_dispatch = strat::HostDispatch::On;
  const double issued = simulate_training(m, c, t, *cost, comm).iteration_time_s;
  double host = 0;
  for (const auto& o : strat::build_work_graph(m, c, t, *cost).ops)
    if (o.stream == strat::Stream::Host) host += o.seconds;
  ASSERT_GT(host, 0.0);
  EXPECT_LT(host, gpu_only);  // GPU-bound over the step
  EXPECT_GT(issued, gpu_only + 1e-5);
  EXPECT_LT(issued, gpu_only + 0.5 * host);
}

}  // namespace
}  // namespace infraplan::sim::train

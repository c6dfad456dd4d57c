// From the profiler trace of one configuration to predictions of others: the whole path of
// `infraplan calibrate --from-trace` on a real trace → profile → the training simulator at other
// micro-batches, sequence lengths and checkpointing, against the step times measured on the H200
// (bench/pytorch/trace_sweep.py, the corpus's own step). The traced configuration is the sweep's
// first and is not among the predicted ones. Nothing is fitted to the measured steps.
//   - plain PyTorch LLaMA-architecture 0.4B, AMP bf16, traced at micro-batch 4, sequence 2048
//     (docs/data/h200_trace_llama-0.4b_amp_mb4_s2048.json.gz; sweep docs/data/h200_llama04b_sweep.json,
//     another machine start than the trace): small steps, bound by the host; the same with trace
//     and sweep from one later start (docs/data/h200_trace_llama-0.4b_amp_mb4_s2048_start2.json.gz,
//     h200_llama04b_sweep_start2.json);
//   - plain PyTorch LLaMA-3.2-3B-shaped, pure bf16, traced at micro-batch 2, sequence 2048, trace and
//     sweep from one start (docs/data/h200_trace_llama3.2-3b_pure_mb2_s2048.json.gz,
//     h200_llama32_3b_sweep.json): bound by the GPU;
//   - plain PyTorch LLaMA-2-7B-shaped, pure bf16, traced at micro-batch 1, sequence 2048, trace and
//     sweep from one start (docs/data/h200_trace_llama2-7b_pure_mb1_s2048.json.gz,
//     h200_llama2_7b_sweep.json): bound by the GPU, at the 700 W power cap.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "common/error.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/framework_costs.hpp"
#include "profiler_trace/trace_profile.hpp"
#include "simulator/corpus_row_test_support.hpp"
#include "simulator/training_sim.hpp"

namespace infraplan::ptrace {
namespace {

const std::string kData = std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/";

struct Prediction {
  std::int64_t micro_batch = 0, seq_len = 0;
  bool ckpt = false;
  double measured = 0, from_trace = 0, embedded = 0;
};

struct SweepResult {
  std::vector<Prediction> rows;
  int within = 0;  ///< predictions from the trace within 10%
  double mean = 0, mean_embedded = 0;
};

/// Calibrates from `trace`, predicts every configuration of `sweep` but its first (the traced one)
/// with the traced profile and with the embedded one of the GPU the trace ran on (`gpu`), and prints
/// the table.
SweepResult predict_sweep(const std::string& trace, const std::string& sweep,
                          const std::string& gpu_name = "h200-sxm-141gb") {
  SweepResult r;
  EXPECT_TRUE(std::filesystem::exists(trace)) << trace;
  EXPECT_TRUE(std::filesystem::exists(sweep)) << sweep;
  TraceCalibrationOptions o;
  o.trace_path = trace;
  const TraceCalibration cal = calibrate_from_trace(o);
  EXPECT_EQ(cal.gpu, gpu_name);
  const hw::GpuSpec& gpu = hw::find_gpu(cal.gpu);
  const hw::CalibratedCostModel traced(hw::parse_profile(cal.profile, "calibrated"), gpu);
  const auto embedded = hw::make_calibrated_cost_model(cal.gpu);

  const Json d = read_json_file(sweep);
  const hw::Cluster c = sim::train::one_gpu_of(d);
  EXPECT_EQ(c.gpu.name, cal.gpu) << sweep << " ran on another GPU than " << trace;
  coll::CommModel comm(c);
  const auto& configs = d.at("configs");
  for (std::size_t i = 1; i < configs.size(); ++i) {
    const Json& row = configs[i];
    if (!row.contains("step_seconds_median")) continue;  // out of memory in the sweep
    const model::ModelSpec m = sim::train::llama_of(row);
    const strat::TrainingConfig t = sim::train::config_of(row, m, c);
    Prediction p;
    p.micro_batch = t.micro_batch, p.seq_len = t.seq_len, p.ckpt = t.recompute != model::Recompute::None;
    p.measured = row.at("step_seconds_median").get<double>();
    p.from_trace = sim::train::simulate_training(m, c, t, traced, comm).iteration_time_s;
    p.embedded = sim::train::simulate_training(m, c, t, *embedded, comm).iteration_time_s;
    r.rows.push_back(p);
  }
  std::printf("%s, traced at micro-batch %lld, sequence %lld (%s):\n",
              configs[0].at("model").get<std::string>().c_str(),
              (long long)configs[0].at("micro_batch").get<std::int64_t>(),
              (long long)configs[0].at("seq_len").get<std::int64_t>(),
              configs[0].at("precision").get<std::string>().c_str());
  std::printf(
      "| micro-batch | seq | checkpointing | measured | from the trace | error | embedded profile | error |\n"
      "|---|---|---|---|---|---|---|---|\n");
  double sum = 0, sum_embedded = 0;
  for (const auto& p : r.rows) {
    const double e = (p.from_trace - p.measured) / p.measured, ee = (p.embedded - p.measured) / p.measured;
    r.within += std::abs(e) <= 0.10 ? 1 : 0;
    sum += std::abs(e), sum_embedded += std::abs(ee);
    std::printf("| %lld | %lld | %s | %.1f ms | %.1f ms | %+.1f%% | %.1f ms | %+.1f%% |\n",
                (long long)p.micro_batch, (long long)p.seq_len, p.ckpt ? "every block" : "none",
                1e3 * p.measured, 1e3 * p.from_trace, 100 * e, 1e3 * p.embedded, 100 * ee);
  }
  if (!r.rows.empty())
    r.mean = sum / double(r.rows.size()), r.mean_embedded = sum_embedded / double(r.rows.size());
  std::printf("%d of %zu configurations within 10%%; mean |error| %.1f%% (embedded profile %.1f%%)\n\n",
              r.within, r.rows.size(), 100 * r.mean, 100 * r.mean_embedded);
  return r;
}

/// Predicts the sweep from the trace and bounds the result: at least `min_within` configurations
/// within 10%, mean |error| below `max_mean`.
void expect_sweep(const std::string& trace, const std::string& sweep, int min_within, double max_mean,
                  const std::string& gpu = "h200-sxm-141gb") {
  const SweepResult r = predict_sweep(kData + trace, kData + sweep, gpu);
  ASSERT_GE(r.rows.size(), 6u);
  EXPECT_GE(r.within, min_within);
  EXPECT_LT(r.mean, max_mean);
}

// With the host costs per block at the median of three machine starts (2026-12-02) 5 of 11 are
// within 10% (6 with one or two starts): the host-bound rows follow the pace of the one machine
// start the sweep ran on, which moves by up to 70% between starts (docs/accuracy.md). The issue's
// target is six; the bound keeps today's count so that a regression shows.
TEST(TraceValidation, OneTracePredictsOtherConfigurations) {
  expect_sweep("h200_trace_llama-0.4b_amp_mb4_s2048.json.gz", "h200_llama04b_sweep.json", 5, 0.13);
}

// A GPU-bound model (2026-12-03, trace and sweep from one machine start): 11 of 11 within 10%,
// mean 3.8%. The target is six.
TEST(TraceValidation, OneTraceOfALargerModelPredictsOtherConfigurations) {
  expect_sweep("h200_trace_llama3.2-3b_pure_mb2_s2048.json.gz", "h200_llama32_3b_sweep.json", 6, 0.10);
}

// A 7B model whose steps run at the power cap (2026-12-03, trace and sweep from one machine start,
// nvidia-smi beside it: docs/data/h200_llama2_7b_sweep_smi.csv).
TEST(TraceValidation, OneTraceOfA7bModelPredictsOtherConfigurations) {
  expect_sweep("h200_trace_llama2-7b_pure_mb1_s2048.json.gz", "h200_llama2_7b_sweep.json", 6, 0.10);
}

// The same host-bound model with its trace from the sweep's own machine start (2026-12-03): 4 of 11
// within 10%, mean 14.7%. That start's host was erratic (steps of one configuration 76–127 ms),
// which neither the trace (the profiler slows the host) nor the profile's host costs carry. The
// bound keeps today's result so that a regression shows.
TEST(TraceValidation, TraceAndSweepOfOneMachineStart) {
  expect_sweep("h200_trace_llama-0.4b_amp_mb4_s2048_start2.json.gz", "h200_llama04b_sweep_start2.json", 4,
               0.16);
}

// The same two models traced and swept on an H100 (2026-12-05 21:36 UTC, GPU-79824889, one machine
// start; nvidia-smi beside it: docs/data/h100_trace_sweeps_smi.csv.gz): `--from-trace` on a GPU whose
// embedded profile is derived, not measured. The GPU comes from the trace's device properties.
TEST(TraceValidation, OneTraceOnAnH100PredictsOtherConfigurations) {
  expect_sweep("h100_trace_llama3.2-3b_pure_mb2_s2048.json.gz", "h100_llama32_3b_sweep.json", 6, 0.10,
               "h100-sxm5-80gb");
}

// 5 of 11 within 10%, mean 21.0%: the configurations the host bounds are 25-48% slow (this machine's
// host is faster than the profile's host costs, which the trace cannot carry: docs/calibration.md).
// The bound keeps today's result so that a change shows.
TEST(TraceValidation, OneTraceOfAHostBoundModelOnAnH100) {
  expect_sweep("h100_trace_llama-0.4b_amp_mb4_s2048.json.gz", "h100_llama04b_sweep.json", 5, 0.22,
               "h100-sxm5-80gb");
}

// A torch.compile trace (llama-0.4b AMP, micro-batch 4 x 2048, 2026-12-03): Inductor's rotary
// kernels are found per layer and the profile's compiled RoPE rows carry this machine's speed on
// them, so the traced configuration's RoPE is priced as traced. The sweep of the same start
// (docs/data/h200_compile_llama04b_sweep.json) is printed: its steps are the host's or wait on it
// inside a pass (docs/accuracy.md, "torch.compile"), which no GPU table moves.
TEST(TraceValidation, CompiledTraceCarriesInductorsRope) {
  TraceCalibrationOptions o;
  o.trace_path = kData + "h200_trace_compile_llama-0.4b_amp_mb4_s2048.json.gz";
  const TraceCalibration cal = calibrate_from_trace(o);
  EXPECT_EQ(cal.framework, "torch-compile");
  const hw::Profile p = hw::parse_profile(cal.profile, "calibrated");
  const Json& ops = cal.profile.at("framework").at("elementwise").at("ops");
  // 24 layers, q and k as SDPA takes them (16 heads each, width 64), rotated: 16 + 4 heads.
  const double tokens = 4.0 * 2048, fwd_elements = tokens * 64 * 32, bwd_elements = tokens * 64 * 20;
  for (const char* name : {"compiled_rope_amp_fwd", "compiled_rope_amp_bwd", "compiled_rope_pure_fwd",
                           "compiled_rope_pure_bwd"}) {
    ASSERT_TRUE(ops.at(name).contains("trace_scale")) << name;
    const Json& ts = ops.at(name).at("trace_scale");
    EXPECT_EQ(ts.at("layers").get<int>(), 24) << name;
    const bool bwd = std::string(name).find("_bwd") != std::string::npos;
    EXPECT_DOUBLE_EQ(ts.at("elements").get<double>(), bwd ? bwd_elements : fwd_elements) << name;
    const double f = ts.at("factor").get<double>();
    EXPECT_GT(f, 0.5) << name;  // the same kernels as the calibration timed, on another start
    EXPECT_LT(f, 2.0) << name;
    const double traced = ts.at("traced_seconds_per_layer").get<double>();
    EXPECT_NEAR(*hw::eager_op_seconds(p, name, bwd ? bwd_elements : fwd_elements), traced, 1e-9 * traced)
        << name;
  }
  const SweepResult r = predict_sweep(o.trace_path, kData + "h200_compile_llama04b_sweep.json");
  EXPECT_EQ(r.rows.size(), 4u);
}

}  // namespace
}  // namespace infraplan::ptrace

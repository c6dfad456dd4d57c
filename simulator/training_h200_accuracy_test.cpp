// Predicted vs measured PyTorch training steps on one H200 (docs/data/h200_pytorch_train.json:
// GPT-2-shaped models, AMP bf16 autocast, fp32 master weights, fused AdamW, activation
// checkpointing per block on/off). Step time from the simulator with the H200's embedded
// calibrated profile; memory from the ledger without the CUDA context (PyTorch's
// max_memory_allocated does not include it). Nothing is fitted to these runs. The table goes to
// docs/accuracy.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "collectives/comm_refit.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/profile.hpp"
#include "hardware/recording_cost_model.hpp"
#include "hardware/roofline_cost_model.hpp"
#include "common/error.hpp"
#include "simulator/training_sim.hpp"

namespace infraplan::sim::train {
namespace {

/// The GPT-2-shaped model a measured row describes (its "model" name and "dims").
model::ModelSpec gpt2_of(const Json& row) {
  const auto& dims = row.at("dims");
  model::ModelSpec m = model::preset("gpt2-124m");
  m.name = row.at("model").get<std::string>();
  m.hidden = dims.at("hidden").get<std::int64_t>();
  m.layers = dims.at("layers").get<std::int64_t>();
  m.heads = m.kv_heads = dims.at("heads").get<std::int64_t>();
  m.head_dim = m.hidden / m.heads;
  m.ffn_hidden = dims.at("ffn").get<std::int64_t>();
  m.vocab = dims.at("vocab").get<std::int64_t>();
  m.max_seq = dims.at("seq").get<std::int64_t>();
  m.tied_embeddings = dims.at("tied_embeddings").get<bool>();
  return m;
}

/// One measured row simulated on `c`: AMP bf16, micro-batch and data parallelism (default 1) and
/// checkpointing (default none) as measured; memory without the CUDA context and NCCL buffers
/// (PyTorch's max_memory_allocated counts neither), against the busiest rank.
struct RowPrediction {
  model::ModelSpec m;
  strat::TrainingConfig t;
  TrainingResult r;
  std::string ckpt;
  double meas_t = 0, meas_m = 0, pred_m = 0, et = 0, em = 0;  ///< et, em: signed relative errors
};
RowPrediction predict_row(const Json& row, const hw::Cluster& c, const hw::CostModel& cost,
                          const coll::CommModel& comm) {
  RowPrediction p;
  p.m = gpt2_of(row);
  p.t.seq_len = p.m.max_seq;
  p.t.dp = row.value("data_parallel", 1);
  p.t.micro_batch = row.at("micro_batch").get<std::int64_t>();
  p.t.global_batch = p.t.micro_batch * p.t.dp;
  p.t.precision = strat::Precision::AmpBF16;
  p.ckpt = row.value("checkpointing", std::string("none"));
  p.t.recompute = p.ckpt == "none" ? model::Recompute::None : model::Recompute::Full;
  // PyTorch DDP's defaults, as the runs used them (bench/pytorch/ddp_step.py): the gradients
  // copied into flat 25 MiB buckets (first 1 MiB), gradient_as_bucket_view=False.
  if (row.value("ddp", std::string()).rfind("DistributedDataParallel", 0) == 0) p.t.dp_buckets = strat::DpBuckets::Copy;
  strat::resolve_training(p.t, p.m, c);
  p.r = simulate_training(p.m, c, p.t, cost, comm);
  p.meas_t = row.at("step_seconds_median").get<double>();
  if (row.contains("max_memory_allocated_bytes_per_rank")) {
    for (const auto& x : row.at("max_memory_allocated_bytes_per_rank"))
      p.meas_m = std::max(p.meas_m, x.get<double>());
  } else {
    p.meas_m = row.at("max_memory_allocated_bytes").get<double>();
  }
  p.pred_m = p.r.peak_bytes - p.r.ledger.line("cuda_context") - p.r.ledger.line("nccl_buffers");
  p.et = (p.r.iteration_time_s - p.meas_t) / p.meas_t;
  p.em = (p.pred_m - p.meas_m) / p.meas_m;
  return p;
}

struct Errors {
  double step = 0, memory = 0;  ///< mean |relative error|
  int configs = 0;
};

/// Every config of docs/data/h200_pytorch_train.json simulated with `cost`; with `print`, the
/// table of docs/accuracy.md.
Errors run_configs(const Json& d, const hw::CostModel& cost, bool print) {
  hw::Cluster c = hw::cluster_preset("dgx-h200", 1);
  c.gpus_per_node = 1;
  coll::CommModel comm(c);
  if (print)
    std::printf(
        "| model | micro-batch | checkpointing | measured step | predicted | error | measured memory | "
        "predicted | error |\n"
        "|---|---|---|---|---|---|---|---|---|\n");
  Errors out;
  for (const auto& row : d.at("configs")) {
    const RowPrediction p = predict_row(row, c, cost, comm);
    if (print)
      std::printf("| %s | %lld | %s | %.1f ms | %.1f ms | %+.1f%% | %.2f GiB | %.2f GiB | %+.1f%% |\n",
                  p.m.name.c_str(), (long long)p.t.micro_batch, p.ckpt.c_str(), 1e3 * p.meas_t,
                  1e3 * p.r.iteration_time_s, 100 * p.et, p.meas_m / 1073741824.0, p.pred_m / 1073741824.0,
                  100 * p.em);
    out.step += std::abs(p.et), out.memory += std::abs(p.em), ++out.configs;
    EXPECT_LT(std::abs(p.et), 0.25) << p.m.name;
    EXPECT_LT(std::abs(p.em), 0.3) << p.m.name;
  }
  out.step /= out.configs, out.memory /= out.configs;
  return out;
}

TEST(TrainingAccuracy, PyTorchStepsOnH200) {
  const std::string path = std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/h200_pytorch_train.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  const Json d = read_json_file(path);
  const std::string gpu = "h200-sxm-141gb";
  std::unique_ptr<hw::CalibratedCostModel> cost;
  try {
    cost = hw::make_calibrated_cost_model(gpu);
  } catch (const Error& e) {
    FAIL() << "embedded profile unusable: " << e.what();
  }
  // INFRAPLAN_GEMM_SHAPES_OUT=FILE: the GEMM shapes these simulations ask for, for
  // infraplan-calibrate --shapes (the profile's exact shapes, docs/calibration.md).
  if (const char* out = std::getenv("INFRAPLAN_GEMM_SHAPES_OUT")) {
    hw::RecordingCostModel rec(*cost);
    run_configs(d, rec, false);
    std::ofstream(out) << rec.shapes_json().dump(1) << "\n";
  }
  std::printf("cost model: embedded h200 profile\n");
  Errors e = run_configs(d, *cost, true);
  std::printf("mean |error|: step time %.1f%%, memory %.1f%% over %d configs\n", 100 * e.step, 100 * e.memory,
              e.configs);
  // The same profile with these configs' GEMM shapes timed exactly (its held-out workload shapes
  // as tables.gemm_shapes, what infraplan calibrate --shapes --add-to gives a user): cuBLASLt's
  // forward layout (TN) for every GEMM, also for the backward ones PyTorch runs in NN / NT.
  hw::Profile with_exact = hw::default_profile(gpu);  // as parsed (the model refers its own copy)
  with_exact.gemm_exact = with_exact.holdout_workload;
  hw::CalibratedCostModel exact(with_exact, hw::find_gpu(gpu));
  Errors ex = run_configs(d, exact, false);
  std::printf("with the %zu exact GEMM shapes: step time %.1f%%, memory %.1f%%\n",
              with_exact.gemm_exact.size(), 100 * ex.step, 100 * ex.memory);
  // Target (docs/accuracy.md): 10% on both. Reached on 2026-11-29: step time 5.3%, memory 9.2%;
  // the step-time guard keeps a margin for the measurement's own run-to-run spread.
  EXPECT_LT(e.step, 0.07);
  EXPECT_LT(e.memory, 0.10);
  EXPECT_LT(ex.step, 0.08);
}

// Data-parallel steps on 2 H200s of one host (docs/data/h200x2_pytorch_ddp.json: PyTorch DDP,
// NCCL, default 25 MiB buckets, micro-batch per rank, no checkpointing), predicted with dp = 2 on a
// node of 2 H200s: the embedded profile for the kernels, the default NCCL constants for the
// gradient all-reduce. Memory: the busiest rank, CUDA context and NCCL buffers excluded.
TEST(TrainingAccuracy, PyTorchDdpOnTwoH200) {
  const std::string path = std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/h200x2_pytorch_ddp.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  const Json d = read_json_file(path);
  hw::Cluster c = hw::cluster_preset("dgx-h200", 1);
  c.gpus_per_node = 2;
  auto cost = hw::make_calibrated_cost_model(c.gpu.name);
  // The collective model refitted on the calibration sweep of the same machine
  // (docs/data/h200x2_nccl.json), then checked here on the DDP steps: calibration first,
  // validation after, nothing fitted to these steps.
  std::vector<coll::MeasuredCollective> calls;
  // Held in a variable: a range-for over a member of a temporary reads freed memory.
  const Json sweep = read_json_file(std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/h200x2_nccl.json");
  for (const auto& r : sweep.at("comm").at("rows"))
    calls.push_back({coll::parse_op(r.at("op").get<std::string>()), {0, 1}, r.at("bytes").get<double>(),
                     r.at("time_us").get<double>() * 1e-6});
  const coll::CommModel comm(c, coll::refit_comm_profile(c, coll::CommProfile{}, calls).profile);
  const coll::CommModel comm_default(c);
  double t_abs_default = 0, m_abs_default = 0;
  for (const auto& row : d.at("configs")) {
    const RowPrediction p = predict_row(row, c, *cost, comm_default);
    t_abs_default += std::abs(p.et), m_abs_default += std::abs(p.em);
  }
  std::printf(
      "| model | micro-batch per rank | measured step | predicted | error | exposed DP comm | measured "
      "memory | "
      "predicted | error |\n|---|---|---|---|---|---|---|---|---|\n");
  double t_abs = 0, m_abs = 0;
  int n = 0;
  for (const auto& row : d.at("configs")) {
    const RowPrediction p = predict_row(row, c, *cost, comm);
    double exposed = 0;
    for (const auto& [k, v] : p.r.breakdown.exposed_comm) exposed += v;
    std::printf("| %s | %lld | %.1f ms | %.1f ms | %+.1f%% | %.1f ms | %.2f GiB | %.2f GiB | %+.1f%% |\n",
                p.m.name.c_str(), (long long)p.t.micro_batch, 1e3 * p.meas_t, 1e3 * p.r.iteration_time_s,
                100 * p.et, 1e3 * exposed, p.meas_m / 1073741824.0, p.pred_m / 1073741824.0, 100 * p.em);
    t_abs += std::abs(p.et), m_abs += std::abs(p.em), ++n;
  }
  std::printf("mean |error|: step time %.1f%%, memory %.1f%% over %d configs (default collective constants: "
              "%.1f%%, %.1f%%)\n",
              100 * t_abs / n, 100 * m_abs / n, n, 100 * t_abs_default / n, 100 * m_abs_default / n);
  // Target (docs/accuracy.md): 10% on both. Run of 2026-12-01: step 8.6%, memory 7.1% (were 11.7%
  // and 16.5% before PyTorch DDP's bucket copy — its flat buckets in the ledger, the copies in and
  // out on the compute stream, 25 MiB buckets — entered the model). Still under-predicted on
  // every row but one: the model hides all but the last bucket's all-reduce behind the backward,
  // and has no term for NCCL's kernels slowing the backward beside them (not measured: that needs
  // bench/pytorch/overlap_step.py on 2+ GPUs). The bounds guard today's numbers.
  EXPECT_LT(t_abs / n, 0.10);
  EXPECT_LT(m_abs / n, 0.09);
}

}  // namespace
}  // namespace infraplan::sim::train

// Predicted vs published training throughput (docs/accuracy.md, training sections). Nothing here
// is fitted to these numbers: the simulator runs with the GPU's embedded calibrated profile
// (datasheet-derived for A100/H100) and the default collective model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <cstdio>

#include "hardware/calibrated_cost_model.hpp"
#include "hardware/profile.hpp"
#include "hardware/roofline_cost_model.hpp"
#include "common/error.hpp"
#include "simulator/training_sim.hpp"

namespace infraplan::sim::train {
namespace {

std::unique_ptr<hw::CostModel> cost_for(const hw::GpuSpec& g) {
  try {
    if (hw::has_default_profile(g.name)) return hw::make_calibrated_cost_model(g.name);
  } catch (const Error& e) {
    std::printf("(no usable profile for %s: %s; using the roofline)\n", g.name.c_str(), e.what());
  }
  return std::make_unique<hw::RooflineCostModel>(g);
}

// One symmetric-mode simulation of `t` (resolved here) on cluster `c`: tokens/s per GPU, and the
// peak memory when asked.
double simulated_tokens_per_gpu(const model::ModelSpec& m, const hw::Cluster& c, const hw::CostModel& cost,
                                const coll::CommModel& comm, strat::TrainingConfig t,
                                double* peak = nullptr) {
  strat::resolve_training(t, m, c);
  TrainingOptions o;
  o.mode = Mode::Symmetric;
  const auto r = simulate_training(m, c, t, cost, comm, o);
  EXPECT_TRUE(std::isfinite(r.tokens_per_s) && r.tokens_per_s > 0) << m.name;
  if (peak) *peak = r.peak_bytes;
  return r.tokens_per_s / double(c.total_gpus());
}

model::ModelSpec gpt(const char* name, std::int64_t h, std::int64_t heads, std::int64_t layers) {
  model::ModelSpec m = model::preset("gpt3-175b");
  m.name = name, m.hidden = h, m.heads = heads, m.kv_heads = heads, m.head_dim = h / heads;
  m.layers = layers, m.ffn_hidden = 4 * h, m.vocab = 51200, m.max_seq = 2048;
  return m;
}

// Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
// Megatron-LM", SC'21, Table 1 (weak scaling on DGX A100 80GB, seq 2048, vocab 51200, fp16,
// full activation recompute). Reported achieved TFLOP/s per GPU by their formula
// 96·B·s·l·h²·(1 + s/6h + V/16lh) / (time · GPUs), which counts the recomputed forward.
struct MegatronRow {
  const char* name;
  std::int64_t h, heads, layers;
  int tp, pp, gpus;
  std::int64_t batch;
  double tflops;
};
const MegatronRow kMegatron[] = {
    {"gpt-1.7b", 2304, 24, 24, 1, 1, 32, 512, 137},       {"gpt-3.6b", 3072, 32, 30, 2, 1, 64, 512, 138},
    {"gpt-7.5b", 4096, 32, 36, 4, 1, 128, 512, 142},      {"gpt-18.4b", 6144, 48, 40, 8, 1, 256, 1024, 135},
    {"gpt-39.1b", 8192, 64, 48, 8, 2, 512, 1536, 138},    {"gpt-76.1b", 10240, 80, 60, 8, 4, 1024, 1792, 140},
    {"gpt-145.6b", 12288, 96, 80, 8, 8, 1536, 2304, 148}, {"gpt-310.1b", 16384, 128, 96, 8, 16, 1920, 2160, 155},
};

TEST(TrainingAccuracy, MegatronWeakScalingOnDgxA100) {
  std::printf("| model | GPUs | TP | PP | DP | published TFLOP/s/GPU | predicted | error |\n|---|---|---|---|---|---|---|---|\n");
  double sum_abs = 0;
  int n = 0;
  for (const auto& row : kMegatron) {
    const auto m = gpt(row.name, row.h, row.heads, row.layers);
    auto c = hw::cluster_preset("dgx-a100-80gb", row.gpus / 8);
    strat::TrainingConfig t;
    t.seq_len = 2048, t.micro_batch = 1, t.global_batch = row.batch, t.tp = row.tp, t.pp = row.pp;
    t.precision = strat::Precision::FP16Mixed, t.recompute = model::Recompute::Full, t.flash_attention = false;
    strat::resolve_training(t, m, c);
    auto cost = cost_for(c.gpu);
    coll::CommModel comm(c);
    TrainingOptions o;
    o.mode = Mode::Symmetric;
    auto r = simulate_training(m, c, t, *cost, comm, o);
    const double B = double(row.batch), s = 2048, l = double(row.layers), h = double(row.h), V = 51200;
    const double flops = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    const double pred = flops / (r.iteration_time_s * row.gpus) / 1e12;
    const double err = (pred - row.tflops) / row.tflops;
    std::printf("| %s | %d | %d | %d | %d | %.0f | %.0f | %+.1f%% |\n", row.name, row.gpus, row.tp, row.pp, t.dp,
                row.tflops, pred, 100 * err);
    sum_abs += std::abs(err), ++n;
    EXPECT_LT(std::abs(err), 0.6) << row.name;  // loose: the roofline fallback has no kernel efficiency
  }
  std::printf("mean |error| %.1f%%\n", 100 * sum_abs / n);
}

// Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models" (2022),
// Tables 3 and 4: GPT models (vocabulary 51,200, sequence 2048, micro-batch 1, DP 1, no
// FlashAttention) on DGX A100 80 GB, TP 8 and PP 1-64, end-to-end iteration time with sequence
// parallelism + selective recompute ("present work") and with full recompute. Validation only:
// none of these rows informed any number of the simulator.
struct KorthikantiRow {
  const char* name;
  std::int64_t h, heads, layers;
  int pp, gpus;
  std::int64_t batch;
  double selective_s, full_s;
};
const KorthikantiRow kKorthikanti[] = {
    {"gpt-22b", 6144, 64, 48, 1, 8, 4, 1.10, 1.42},
    {"gpt-175b", 12288, 96, 96, 8, 64, 64, 13.75, 18.13},
    {"gpt-530b", 20480, 128, 105, 35, 280, 280, 37.83, 49.05},
    {"gpt-1t", 25600, 160, 128, 64, 512, 512, 71.49, 94.42},
};

TEST(TrainingAccuracy, MegatronSequenceParallelOnDgxA100) {
  std::printf(
      "| model | GPUs | TP | PP | recompute | SP | published s/iteration | predicted | error |\n"
      "|---|---|---|---|---|---|---|---|---|\n");
  double sum_sel = 0, max_sel = 0, sum_full = 0, max_full = 0;
  for (const auto& row : kKorthikanti) {
    const auto m = gpt(row.name, row.h, row.heads, row.layers);
    auto c = hw::cluster_preset("dgx-a100-80gb", row.gpus / 8);
    auto cost = cost_for(c.gpu);
    coll::CommModel comm(c);
    for (bool selective : {true, false}) {
      strat::TrainingConfig t;
      t.seq_len = 2048, t.micro_batch = 1, t.global_batch = row.batch, t.tp = 8, t.pp = row.pp, t.dp = 1;
      t.sp = selective, t.flash_attention = false, t.precision = strat::Precision::BF16Mixed;
      t.recompute = selective ? model::Recompute::Selective : model::Recompute::Full;
      strat::resolve_training(t, m, c);
      TrainingOptions o;
      o.mode = Mode::Symmetric;
      const auto r = simulate_training(m, c, t, *cost, comm, o);
      const double pub = selective ? row.selective_s : row.full_s;
      const double err = (r.iteration_time_s - pub) / pub;
      std::printf("| %s | %d | 8 | %d | %s | %s | %.2f | %.2f | %+.1f%% |\n", row.name, row.gpus, row.pp,
                  selective ? "selective" : "full", selective ? "yes" : "no", pub, r.iteration_time_s, 100 * err);
      (selective ? sum_sel : sum_full) += std::abs(err);
      double& mx = selective ? max_sel : max_full;
      mx = std::max(mx, std::abs(err));
    }
  }
  const double n = double(std::size(kKorthikanti));
  std::printf("SP + selective: mean |error| %.1f%%, max %.1f%%; full recompute: mean %.1f%%, max %.1f%%\n",
              100 * sum_sel / n, 100 * max_sel, 100 * sum_full / n, 100 * max_full);
  // Bounds of the accuracy target (mean 5%, max 10%) on rows the model was never fitted to.
  EXPECT_LT(sum_sel / n, 0.05);
  EXPECT_LT(max_sel, 0.10);
  EXPECT_LT(sum_full / n, 0.05);
  EXPECT_LT(max_full, 0.10);
}

// NVIDIA NeMo 24.07 pre-training performance summary (docs/source/performance/performance_summary.md
// of the NeMo repository, DGX-H100, FP8 with Transformer Engine, Megatron-core): published tokens/s
// per GPU. Sequence parallelism on wherever TP > 1, the distributed optimizer, no recompute,
// interleaved 1F1B with the table's virtual stages. GPT vocabularies padded as Megatron pads them
// (to a multiple of 128·TP). Validation only: no number of the simulator was chosen on these rows.
struct NemoRow {
  const char* name;
  const char* preset;
  std::int64_t h, heads, layers, ffn;  // 0: the preset's
  int gpus;
  std::int64_t gbs, mbs, seq;
  int tp, pp, cp, vp;
  double tokens_per_gpu;
};
const NemoRow kNemoFp8[] = {
    {"GPT3-5B", "gpt3-175b", 4096, 32, 24, 16384, 64, 2048, 4, 2048, 1, 1, 1, 1, 22521},
    {"GPT3-20B", "gpt3-175b", 6144, 48, 44, 24576, 64, 256, 2, 2048, 2, 1, 1, 1, 5851},
    {"GPT3-175B", "gpt3-175b", 0, 0, 0, 0, 128, 256, 1, 2048, 4, 8, 1, 6, 726},
    {"GPT3-175B", "gpt3-175b", 0, 0, 0, 0, 512, 2048, 2, 2048, 4, 8, 1, 6, 782},
    {"LLAMA2-7B", "llama2-7b", 0, 0, 0, 0, 8, 128, 1, 4096, 1, 1, 1, 1, 16847},
    {"LLAMA2-13B", "llama2-13b", 0, 0, 0, 0, 16, 128, 1, 4096, 1, 4, 1, 10, 8646},
    {"LLAMA2-70B", "llama2-70b", 0, 0, 0, 0, 64, 128, 1, 4096, 4, 4, 1, 20, 1707},
    {"LLAMA3-8B", "llama3-8b", 0, 0, 0, 0, 8, 128, 1, 8192, 1, 1, 2, 1, 12036},
    {"LLAMA3-70B", "llama3-70b", 0, 0, 0, 0, 64, 128, 1, 8192, 4, 4, 2, 5, 1533},
};

TEST(TrainingAccuracy, NemoFp8PretrainingOnDgxH100) {
  std::printf(
      "| model | GPUs | TP | PP | CP | VP | published tokens/s/GPU | predicted (tables' clock) | error | "
      "predicted "
      "(sustained clock) | error | peak memory |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  double sum_tables = 0, sum_sustained = 0, sum_tp1 = 0, sum_tp2 = 0;
  int n_tp1 = 0, n_tp2 = 0;
  for (const auto& row : kNemoFp8) {
    model::ModelSpec m = model::preset(row.preset);
    if (row.h > 0) {
      m.name = row.name, m.hidden = row.h, m.heads = row.heads, m.kv_heads = row.heads,
      m.head_dim = row.h / row.heads;
      m.layers = row.layers, m.ffn_hidden = row.ffn, m.max_seq = row.seq;
    }
    if (m.vocab % (128 * row.tp) != 0) m.vocab = (m.vocab / (128 * row.tp) + 1) * 128 * row.tp;
    auto c = hw::cluster_preset("dgx-h100", std::max(1, row.gpus / 8));
    strat::TrainingConfig t;
    t.seq_len = row.seq, t.micro_batch = row.mbs, t.global_batch = row.gbs;
    t.tp = row.tp, t.pp = row.pp, t.cp = row.cp, t.dp = row.gpus / (row.tp * row.pp * row.cp);
    t.sp = row.tp > 1, t.zero = 1, t.precision = strat::Precision::FP8Mixed;
    t.framework = strat::Framework::Megatron, t.recompute = model::Recompute::None;
    if (row.vp > 1) t.pp_schedule = strat::PpSchedule::Interleaved, t.pp_virtual_stages = row.vp;
    strat::resolve_training(t, m, c);
    auto cost = cost_for(c.gpu);
    coll::CommModel comm(c);
    double err[2] = {0, 0}, pred[2] = {0, 0}, peak = 0;
    for (int sustained = 0; sustained < 2; ++sustained) {
      TrainingOptions o;
      o.mode = Mode::Symmetric;
      o.sustained_clock = sustained == 1;
      const auto r = simulate_training(m, c, t, *cost, comm, o);
      ASSERT_TRUE(std::isfinite(r.tokens_per_s) && r.tokens_per_s > 0) << row.name;
      pred[sustained] = r.tokens_per_s / row.gpus;
      err[sustained] = pred[sustained] / row.tokens_per_gpu - 1;
      peak = r.peak_bytes;
    }
    std::printf("| %s | %d | %d | %d | %d | %d | %.0f | %.0f | %+.1f%% | %.0f | %+.1f%% | %.1f GiB |\n",
                row.name, row.gpus, row.tp, row.pp, row.cp, row.vp, row.tokens_per_gpu, pred[0], 100 * err[0],
                pred[1], 100 * err[1], peak / 1073741824.0);
    sum_tables += std::abs(err[0]), sum_sustained += std::abs(err[1]);
    (row.tp == 1 ? sum_tp1 : sum_tp2) += std::abs(err[1]);
    ++(row.tp == 1 ? n_tp1 : n_tp2);
  }
  const double n = double(std::size(kNemoFp8));
  std::printf(
      "mean |error|: %.1f%% at the tables' clock, %.1f%% at the sustained clock (tp = 1: %.1f%% over %d "
      "rows; "
      "tp > 1: %.1f%% over %d)\n",
      100 * sum_tables / n, 100 * sum_sustained / n, 100 * sum_tp1 / n_tp1, n_tp1, 100 * sum_tp2 / n_tp2,
      n_tp2);
  // Not the 5% target: fp8 recipes are under-priced (docs/accuracy.md, "FP8 pre-training on DGX-H100").
  // The bounds hold the documented state so that a change for better or worse shows here.
  EXPECT_LT(sum_sustained / n, 0.20);
  EXPECT_LT(sum_tables / n, 0.35);
}

// torchtitan (PyTorch's own LLM trainer), docs/performance.md of its repository: Llama 2 and
// Llama 3 trained with FSDP2 (fully_shard over all 64 GPUs, bf16 parameters for compute, fp32
// gradient reduce-scatter and fp32 AdamW states), eager PyTorch, SDPA attention, on 64 A100 80GB
// (8 nodes of 8); published tokens/s per GPU ("WPS"). Simulated as a user would write them:
// zero 3 over dp = 64, bf16-mixed, cluster dgx-a100-80gb (its 8 × 200 Gb/s per node is an
// assumption: the page does not name the network; FSDP's traffic is hidden behind compute in
// every row, exposed under 1%). Op list: `transformers`, chosen by reading torchtitan's modules
// (its RMSNorm is the same unfused fp32 module as transformers': to fp32, pow, mean, rsqrt, two
// muls); `pytorch-eager` (torch's fused F.rms_norm) shown for comparison. "Selective layer"
// checkpoints every second block (torchtitan's selective_ac_option "2"): recompute_layers = half
// the layers. "Selective op" (save matmul and attention outputs except every second matmul,
// recompute the rest) is recompute "selective-op". Validation only: no number of the simulator was
// chosen on these rows.
struct TorchtitanRow {
  const char* name;
  const char* preset;
  std::int64_t seq, mbs;
  const char* checkpointing;  // "none", "full", "layer" (every second block), "op" (bracketed)
  double tokens_per_gpu;
};
const TorchtitanRow kTorchtitan[] = {
    {"Llama 3 8B", "llama3-8b", 8192, 1, "layer", 2904},
    {"Llama 3 8B", "llama3-8b", 8192, 1, "op", 2973},
    {"Llama 3 70B", "llama3-70b", 8192, 1, "full", 331},
    {"Llama 2 13B", "llama2-13b", 4096, 2, "none", 2162},
    {"Llama 2 13B", "llama2-13b", 4096, 2, "layer", 1914},
    {"Llama 2 13B", "llama2-13b", 4096, 2, "op", 1904},
    {"Llama 2 70B", "llama2-70b", 4096, 1, "op", 355},
    {"Llama 2 70B", "llama2-70b", 4096, 2, "full", 353},
};

TEST(TrainingAccuracy, TorchtitanFsdpOnDgxA100) {
  auto c = hw::cluster_preset("dgx-a100-80gb", 8);
  auto cost = cost_for(c.gpu);
  coll::CommModel comm(c);
  auto tokens_per_gpu = [&](const model::ModelSpec& m, const TorchtitanRow& row, model::Recompute rc,
                            std::int64_t layers, strat::Framework fw, double* peak = nullptr) {
    strat::TrainingConfig t;
    t.seq_len = row.seq, t.micro_batch = row.mbs, t.global_batch = 64 * row.mbs, t.zero = 3;
    t.precision = strat::Precision::BF16Mixed, t.framework = fw, t.recompute = rc,
    t.recompute_layers = layers;
    return simulated_tokens_per_gpu(m, c, *cost, comm, t, peak);
  };
  std::printf(
      "| model | micro-batch × seq | checkpointing | published tokens/s/GPU | predicted (transformers op "
      "list) | "
      "error | predicted (pytorch-eager) | error | predicted (megatron, bf16-mixed's default) | error | peak "
      "memory "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  double sum = 0, worst = 0, sum_op = 0, worst_op = 0;
  int n = 0, n_op = 0;
  for (const auto& row : kTorchtitan) {
    const auto m = model::preset(row.preset);
    const std::string ck = row.checkpointing;
    if (ck == "op") {
      // Predicted with recompute "selective-op" (torchtitan's policy, priced since 2026-12-05);
      // printed beside the no- and full-recompute predictions it should lie between.
      const double none = tokens_per_gpu(m, row, model::Recompute::None, 0, strat::Framework::Transformers);
      const double full = tokens_per_gpu(m, row, model::Recompute::Full, 0, strat::Framework::Transformers);
      double peak = 0;
      const double sac =
          tokens_per_gpu(m, row, model::Recompute::SelectiveOp, 0, strat::Framework::Transformers, &peak);
      const double err = sac / row.tokens_per_gpu - 1;
      std::printf(
          "| %s | %lld × %lld | selective op | %.0f | %.0f | %+.1f%% | (full %.0f … none %.0f) | | | | %.1f "
          "GiB "
          "|\n",
          row.name, (long long)row.mbs, (long long)row.seq, row.tokens_per_gpu, sac, 100 * err, full, none,
          peak / 1073741824.0);
      EXPECT_GT(sac, full) << row.name;
      EXPECT_LT(sac, none) << row.name;
      sum_op += std::abs(err), worst_op = std::max(worst_op, std::abs(err));
      ++n_op;
      continue;
    }
    const model::Recompute rc = ck == "none" ? model::Recompute::None : model::Recompute::Full;
    const std::int64_t layers = ck == "layer" ? m.layers / 2 : 0;
    double peak = 0;
    const double hf = tokens_per_gpu(m, row, rc, layers, strat::Framework::Transformers, &peak);
    const double eager = tokens_per_gpu(m, row, rc, layers, strat::Framework::PytorchEager);
    const double megatron = tokens_per_gpu(m, row, rc, layers, strat::Framework::Megatron);
    const double err = hf / row.tokens_per_gpu - 1;
    std::printf(
        "| %s | %lld × %lld | %s | %.0f | %.0f | %+.1f%% | %.0f | %+.1f%% | %.0f | %+.1f%% | %.1f GiB |\n",
        row.name, (long long)row.mbs, (long long)row.seq, ck == "layer" ? "every second block" : ck.c_str(),
        row.tokens_per_gpu, hf, 100 * err, eager, 100 * (eager / row.tokens_per_gpu - 1), megatron,
        100 * (megatron / row.tokens_per_gpu - 1), peak / 1073741824.0);
    sum += std::abs(err), worst = std::max(worst, std::abs(err));
    ++n;
  }
  std::printf(
      "mean |error| %.1f%%, max %.1f%% over %d rows (transformers op list); selective op: %.1f%%, max "
      "%.1f%% over %d rows\n",
      100 * sum / n, 100 * worst, n, 100 * sum_op / n_op, 100 * worst_op, n_op);
  EXPECT_LT(sum / n, 0.05);
  EXPECT_LT(worst, 0.10);
  // Selective op: the documented state (docs/accuracy.md: 3.0%, 0.7% and +16.1% for the Llama 2 70B
  // row at micro-batch 1, which the published figure puts at the full-recompute prediction).
  EXPECT_LT(sum_op / n_op, 0.10);
  EXPECT_LT(worst_op, 0.20);
}

// IBM's FSDP pre-training exemplar (foundation-model-stack/fms-fsdp: the PyTorch blog "Maximizing
// training throughput using PyTorch FSDP", 2024-03, Table 1, and the repository's README table):
// Llama 2 7B/13B/70B and a CodeLlama-34B-shaped model (48 layers, hidden 8192, 64 heads over 8 KV
// heads, FFN 22016) in eager PyTorch with SDPA flash attention, FSDP bf16 mixed precision, AdamW in
// fp32, sequence 4096; HSDP (sharded inside each node of 8, replicated across) for 7B and 13B, FSDP
// over all GPUs for 34B and 70B, as the README lists them. 128 A100 80GB ("400 Gbps network
// connectivity and GPU direct RDMA") and 96 H100 80GB ("800 Gbps"); tokens/s per GPU. Simulated on
// the presets dgx-a100-80gb and dgx-h100 (the pages do not say per node or per GPU; the test also
// prints the predictions with the figures read as per node), with the transformers op
// list (FMS's RMSNorm is the unfused fp32 module). The 13B "selective" row checkpoints an
// unstated fraction of the blocks: bracketed between no and full recompute. Validation only.
struct FmsRow {
  const char* source;
  const char* gpu;  // "a100" or "h100"
  const char* model;
  std::int64_t mbs;
  const char* checkpointing;  // "none", "full", "some" (bracketed)
  double tokens_per_gpu;
};
const FmsRow kFms[] = {
    {"blog", "a100", "7B", 2, "none", 3700},    {"README", "a100", "7B", 2, "none", 3760},
    {"README", "a100", "13B", 1, "none", 1700}, {"blog", "a100", "13B", 2, "some", 1800},
    {"blog", "a100", "34B", 2, "full", 700},    {"README", "a100", "34B", 8, "full", 772},
    {"blog", "a100", "70B", 2, "full", 370},    {"README", "a100", "70B", 6, "full", 380},
    {"blog", "h100", "7B", 2, "none", 7500},    {"blog", "h100", "13B", 2, "some", 3800},
    {"blog", "h100", "34B", 2, "full", 1550},   {"blog", "h100", "70B", 2, "full", 800},
};

TEST(TrainingAccuracy, FmsFsdpOnA100AndH100) {
  auto model_of = [](const std::string& name) {
    if (name == "7B") return model::preset("llama2-7b");
    if (name == "13B") return model::preset("llama2-13b");
    if (name == "70B") return model::preset("llama2-70b");
    model::ModelSpec m = model::preset("llama2-70b");  // CodeLlama-34B's shape
    m.name = "codellama-34b-shape", m.layers = 48, m.ffn_hidden = 22016;
    return m;
  };
  std::printf(
      "| source | GPUs | model | micro-batch | checkpointing | sharding | published tokens/s/GPU | predicted "
      "| error | "
      "peak memory |\n|---|---|---|---|---|---|---|---|---|---|\n");
  double sum[2] = {0, 0}, sum_per_node[2] = {0, 0};
  double worst[2] = {0, 0};
  int n[2] = {0, 0};
  std::string other_reading;
  for (const auto& row : kFms) {
    const bool h100 = std::string(row.gpu) == "h100";
    const int gpus = h100 ? 96 : 128;
    auto c = hw::cluster_preset(h100 ? "dgx-h100" : "dgx-a100-80gb", gpus / 8);
    auto cost = cost_for(c.gpu);
    coll::CommModel comm(c);
    const auto m = model_of(row.model);
    const bool hsdp = std::string(row.model) == "7B" || std::string(row.model) == "13B";
    auto run_on = [&](const hw::Cluster& cl, const coll::CommModel& cm, model::Recompute rc, double* peak) {
      strat::TrainingConfig t;
      t.seq_len = 4096, t.micro_batch = row.mbs, t.global_batch = gpus * row.mbs, t.zero = 3;
      t.dp_shard = hsdp ? 8 : 0;
      t.precision = strat::Precision::BF16Mixed, t.framework = strat::Framework::Transformers,
      t.recompute = rc;
      return simulated_tokens_per_gpu(m, cl, *cost, cm, t, peak);
    };
    auto run = [&](model::Recompute rc, double* peak = nullptr) { return run_on(c, comm, rc, peak); };
    // The other reading of the network: the published figure as the whole node's (8 NICs of 1/8 of it).
    hw::Cluster per_node = c;
    per_node.inter.nic_Gbps = (h100 ? 800.0 : 400.0) / 8;
    const coll::CommModel per_node_comm(per_node);
    auto run_per_node = [&](model::Recompute rc) { return run_on(per_node, per_node_comm, rc, nullptr); };
    const std::string ck = row.checkpointing;
    if (ck == "some") {
      const double none = run(model::Recompute::None), full = run(model::Recompute::Full);
      other_reading += std::string(other_reading.empty() ? "" : "; ") + row.gpu + " " + row.model + " " +
                       std::to_string(std::lround(run_per_node(model::Recompute::Full))) + " … " +
                       std::to_string(std::lround(run_per_node(model::Recompute::None))) + " (published " +
                       std::to_string(std::lround(row.tokens_per_gpu)) + ")";
      std::printf(
          "| %s | %d %s | %s | %lld | some blocks (unstated) | %s | %.0f | full %.0f … none %.0f | | |\n",
          row.source, gpus, row.gpu, row.model, (long long)row.mbs, hsdp ? "HSDP" : "FSDP",
          row.tokens_per_gpu, full, none);
      continue;
    }
    double peak = 0;
    const model::Recompute rc = ck == "none" ? model::Recompute::None : model::Recompute::Full;
    const double pred = run(rc, &peak);
    const double err = pred / row.tokens_per_gpu - 1;
    const double err_per_node = run_per_node(rc) / row.tokens_per_gpu - 1;
    sum_per_node[h100] += std::abs(err_per_node);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s %s mb %lld %+.1f%%", row.gpu, row.model, (long long)row.mbs,
                  100 * err_per_node);
    other_reading += std::string(other_reading.empty() ? "" : "; ") + buf;
    std::printf("| %s | %d %s | %s | %lld | %s | %s | %.0f | %.0f | %+.1f%% | %.1f GiB |\n", row.source, gpus,
                row.gpu, row.model, (long long)row.mbs, ck.c_str(), hsdp ? "HSDP" : "FSDP",
                row.tokens_per_gpu, pred, 100 * err, peak / 1073741824.0);
    sum[h100] += std::abs(err), worst[h100] = std::max(worst[h100], std::abs(err)), ++n[h100];
  }
  std::printf(
      "A100: mean |error| %.1f%%, max %.1f%% over %d rows; H100: mean %.1f%%, max %.1f%% over %d rows\n",
      100 * sum[0] / n[0], 100 * worst[0], n[0], 100 * sum[1] / n[1], 100 * worst[1], n[1]);
  std::printf(
      "The network figures as per node (A100 400 Gb/s, H100 800 Gb/s): %s — mean A100 %.1f%%, H100 %.1f%%\n",
      other_reading.c_str(), 100 * sum_per_node[0] / n[0], 100 * sum_per_node[1] / n[1]);
  // A100: the PyTorch-step target (mean 10%, max 20%). H100 (a profile derived from the H200's):
  // every row fast (docs/accuracy.md); the bound holds the documented state so a change shows.
  EXPECT_LT(sum[0] / n[0], 0.10);
  EXPECT_LT(worst[0], 0.20);
  EXPECT_LT(sum[1] / n[1], 0.35);
}

// Llama 3 405B on H100 (Llama 3 paper, Table 4): bf16, seq 8192, TP 8, PP 16; reported MFU. The
// schedule as the paper describes it (§3.3.2): interleaved 1F1B with one Transformer layer fewer
// on the first and the last stage, so that the first model chunk holds only the embedding and the
// last only the output projection and loss: 126 layers as pp_layers = [7, 8 × 14, 7] over
// 16 × 8 chunks of one layer. For comparison the same rows with plain 1F1B.
TEST(TrainingAccuracy, Llama3_405bMfuOnH100) {
  struct Row {
    int gpus, dp;
    std::int64_t per_dp;
    double mfu;
  };
  const auto m = model::preset("llama3-405b");
  std::printf(
      "| GPUs | TP | PP | DP | batch/DP | schedule | published MFU | predicted MFU | error | peak memory |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  for (Row row : {Row{8192, 64, 32, 0.43}, Row{16384, 128, 16, 0.41}}) {
    auto c = hw::cluster_preset("dgx-h100", row.gpus / 8);
    auto cost = cost_for(c.gpu);
    coll::CommModel comm(c);
    for (bool meta : {true, false}) {
      strat::TrainingConfig t;
      t.seq_len = 8192, t.micro_batch = 1, t.tp = 8, t.pp = 16, t.dp = row.dp, t.sp = true, t.zero = 1;
      t.global_batch = row.per_dp * row.dp;
      if (meta) {
        t.pp_schedule = strat::PpSchedule::Interleaved, t.pp_virtual_stages = 8;
        t.pp_layers = {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7};
      }
      strat::resolve_training(t, m, c);
      auto e = estimate_training(m, c, t, *cost, comm);
      std::printf("| %d | 8 | 16 | %d | %lld | %s | %.0f%% | %.1f%% | %+.1f%% | %.1f GiB |\n", row.gpus, row.dp,
                  (long long)row.per_dp, meta ? "interleaved v=8, pp_layers [7, 8×14, 7]" : "1f1b", 100 * row.mfu,
                  100 * e.mfu, 100 * (e.mfu - row.mfu) / row.mfu, e.peak_bytes / 1073741824.0);
      EXPECT_NEAR(e.mfu, row.mfu, 0.2);
    }
  }
}

}  // namespace
}  // namespace infraplan::sim::train

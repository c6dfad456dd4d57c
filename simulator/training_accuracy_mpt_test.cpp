// Predicted vs published: MosaicML's MPT training benchmarks (llm-foundry,
// scripts/train/benchmarking/README.md, tables of 2023-10 and 2024-01; docs/data/published/
// llm_foundry_mpt_benchmarks.csv holds every row as published). Composer + PyTorch FSDP
// (FULL_SHARD, mixed precision DEFAULT) with torch autocast bf16, MPT models of 125M-70B (LayerNorm,
// GELU MLP of 4 × d_model, learned positions, tied embeddings, no biases, vocabulary 50368),
// sequences of 512-65536 tokens, activation checkpointing of every block or none, on 8-512 H100
// 80GB and 8 A100 80GB (8 × 200 Gb/s RoCE per node). Simulated as a user would write them:
// zero 3 over all GPUs, amp-bf16, framework pytorch-eager, the presets dgx-h100 and dgx-a100-80gb,
// symmetric mode. Validation only: no number of the simulator was chosen on these rows.
// INFRAPLAN_MPT_ROWS=1 prints every row.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "hardware/calibrated_cost_model.hpp"
#include "simulator/training_sim.hpp"

namespace infraplan::sim::train {
namespace {

struct MptRow {
  std::string section, model, gpu, precision;
  std::int64_t seq = 0, gpus = 0, micro_batch = 0, global_batch = 0;
  double tokens_per_gpu = 0;
  bool checkpointing = false;
};

std::vector<MptRow> read_rows() {
  std::ifstream in(std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/published/llm_foundry_mpt_benchmarks.csv");
  std::vector<MptRow> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> c;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) c.push_back(f);
    if (c.size() < 13) continue;
    MptRow r;
    r.section = c[0], r.model = c[1], r.seq = std::stoll(c[2]), r.gpus = std::stoll(c[3]), r.gpu = c[4];
    r.micro_batch = std::stoll(c[5]), r.global_batch = std::stoll(c[7]), r.tokens_per_gpu = std::stod(c[8]);
    r.precision = c[9], r.checkpointing = c[12] == "True";
    rows.push_back(r);
  }
  return rows;
}

// llm-foundry's scripts/train/yamls/pretrain/mpt-*.yaml: d_model, n_heads, n_layers.
model::ModelSpec mpt(const std::string& size, std::int64_t seq) {
  static const std::map<std::string, std::array<std::int64_t, 3>> dims = {
      {"125m", {768, 12, 12}}, {"350m", {1024, 16, 24}}, {"760m", {1536, 12, 24}},
      {"1b", {2048, 16, 24}},  {"3b", {2560, 20, 32}},   {"7b", {4096, 32, 32}},
      {"13b", {5120, 40, 40}}, {"30b", {7168, 56, 48}},  {"70b", {8192, 64, 80}}};
  const auto& d = dims.at(size);
  model::ModelSpec m = model::preset("gpt3-175b");  // LayerNorm, GELU, learned positions
  m.name = "mpt-" + size, m.hidden = d[0], m.heads = d[1], m.kv_heads = d[1], m.head_dim = d[0] / d[1];
  m.layers = d[2], m.ffn_hidden = 4 * d[0], m.vocab = 50368, m.tied_embeddings = true, m.linear_bias = false;
  m.qkv_bias = false, m.max_seq = seq;
  return m;
}

// Signed errors of predicted tokens/s per GPU by GPU and sequence bucket (<= 2048, 4096-8192,
// >= 16384 tokens) for the amp_bf16 rows, attention priced by `kernel`; `skipped` counts the rows of
// other recipes.
std::map<std::pair<std::string, int>, std::vector<double>> mpt_errors(const std::vector<MptRow>& rows,
                                                                      hw::AttentionKernel kernel,
                                                                      bool print_rows, int* skipped) {
  std::map<std::pair<std::string, int>, std::vector<double>> err;
  *skipped = 0;
  for (const auto& r : rows) {
    if (r.precision != "amp_bf16" || r.global_batch % (r.gpus * r.micro_batch) != 0) {
      ++*skipped;  // bf16 PURE and amp_fp8 (Transformer Engine) rows: other recipes
      continue;
    }
    const bool h100 = r.gpu == "h100_80gb";
    auto c =
        hw::cluster_preset(h100 ? "dgx-h100" : "dgx-a100-80gb", int(std::max<std::int64_t>(1, r.gpus / 8)));
    const auto m = mpt(r.model, r.seq);
    strat::TrainingConfig t;
    t.seq_len = r.seq, t.micro_batch = r.micro_batch, t.global_batch = r.global_batch, t.zero = 3;
    t.recompute = r.checkpointing ? model::Recompute::Full : model::Recompute::None;
    t.precision = strat::Precision::AmpBF16, t.framework = strat::Framework::PytorchEager;
    t.attention_kernel = kernel;
    strat::resolve_training(t, m, c);
    auto cost = hw::make_calibrated_cost_model(c.gpu.name);
    coll::CommModel comm(c);
    TrainingOptions o;
    o.mode = Mode::Symmetric;
    const auto res = simulate_training(m, c, t, *cost, comm, o);
    EXPECT_TRUE(std::isfinite(res.tokens_per_s) && res.tokens_per_s > 0) << r.model << " " << r.seq;
    const double e = res.tokens_per_s / double(r.gpus) / r.tokens_per_gpu - 1;
    err[{h100 ? "H100" : "A100", r.seq <= 2048 ? 0 : r.seq <= 8192 ? 1 : 2}].push_back(e);
    if (print_rows)
      std::printf(
          "%-4s %-5s seq %6lld gpus %4lld mbs %3lld ckpt %d published %8.0f predicted %8.0f %+6.1f%% (%s)\n",
          h100 ? "H100" : "A100", r.model.c_str(), (long long)r.seq, (long long)r.gpus,
          (long long)r.micro_batch, int(r.checkpointing), r.tokens_per_gpu, res.tokens_per_s / double(r.gpus),
          100 * e, hw::attention_kernel_name(kernel));
  }
  return err;
}

// Mean |error| and signed median per (GPU, bucket), printed as docs/accuracy.md's table.
std::map<std::pair<std::string, int>, std::pair<double, double>> print_table(
    std::map<std::pair<std::string, int>, std::vector<double>> err) {
  static const char* const kBucket[] = {"512-2048", "4096-8192", "16384-65536"};
  std::printf(
      "| GPU | sequence | rows | mean abs error | median (signed) | min | max "
      "|\n|---|---|---|---|---|---|---|\n");
  std::map<std::pair<std::string, int>, std::pair<double, double>> stat;
  for (auto& [key, v] : err) {
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += std::abs(x);
    const double median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    stat[key] = {sum / double(v.size()), median};
    std::printf("| %s | %s | %zu | %.1f%% | %+.1f%% | %+.1f%% | %+.1f%% |\n", key.first.c_str(),
                kBucket[key.second], v.size(), 100 * sum / double(v.size()), 100 * median, 100 * v.front(),
                100 * v.back());
  }
  return stat;
}

// The rows ran MosaicML's Triton FlashAttention (attn_impl "triton", the benchmark script's default
// when the tables were made; docs/accuracy.md, "Which attention the rows ran"), which no profile has:
// they are priced with the closest measured kernel, attention_kernel flash2. The default kernel's
// table is printed second, for comparison.
TEST(TrainingAccuracy, MptComposerFsdpOnA100AndH100) {
  const auto rows = read_rows();
  ASSERT_GE(rows.size(), 200u) << "docs/data/published/llm_foundry_mpt_benchmarks.csv";
  const bool print_rows = std::getenv("INFRAPLAN_MPT_ROWS") != nullptr;
  int skipped = 0;
  std::printf("attention_kernel flash2 (the closest measured kernel):\n");
  const auto stat = print_table(mpt_errors(rows, hw::AttentionKernel::Flash2, print_rows, &skipped));
  std::printf("attention_kernel default (cuDNN's kernels on Hopper):\n");
  const auto before = print_table(mpt_errors(rows, hw::AttentionKernel::Default, print_rows, &skipped));
  std::printf("(%d rows of other recipes not simulated)\n", skipped);
  // A100 up to 2,048 tokens: the PyTorch-step target (mean 10%). The rest holds the documented
  // state (docs/accuracy.md, "MPT on Composer"): long sequences and every H100 row fast.
  auto at = [&](const char* gpu, int bucket) { return stat.at(std::make_pair(std::string(gpu), bucket)); };
  EXPECT_LT(at("A100", 0).first, 0.10);
  EXPECT_LT(at("A100", 2).second, 0.50);
  EXPECT_GT(at("A100", 2).second, 0.20);
  EXPECT_LT(at("H100", 0).second, 0.35);
  EXPECT_GT(at("H100", 0).second, 0.15);
  // The FlashAttention-2 tables slow the H100's long sequences (the A100 has none: the same).
  const auto key = std::make_pair(std::string("H100"), 2);
  EXPECT_LT(stat.at(key).second, before.at(key).second - 0.2);
}

}  // namespace
}  // namespace infraplan::sim::train

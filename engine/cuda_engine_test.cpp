// The CUDA engine on a GPU against the host reference model: the simulator's scheduler, block
// manager and prefix cache drive CudaBackend through chunked prefill, prefix-cache hits,
// copy-on-write, preemption by recompute and mixed prefill/decode steps, eager and as CUDA graphs;
// every sampled position's logits are compared with ReferenceModel (teacher-forced on the
// engine's own tokens) and every greedy token with the reference's argmax. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "calib_kernels/cuda_util.hpp"
#include "engine/cuda_backend.hpp"
#include "engine/engine_test_workload.hpp"
#include "engine/reference_model.hpp"
#include "engine/safetensors.hpp"
#include "common/error.hpp"
#include "simulator/serving_engine.hpp"

using namespace infraplan;
using namespace infraplan::engine;
using namespace infraplan::sim::serve;

namespace {

#define REQUIRE_GPU() \
  if (!calib::gpu_available()) GTEST_SKIP() << "no CUDA GPU"

LlamaConfig tiny(int heads, int kv_heads) {
  LlamaConfig c;
  c.name = "tiny-gpu";
  c.layers = 2;
  c.hidden = 256;
  c.heads = heads;
  c.kv_heads = kv_heads;
  c.ffn = 512;
  c.vocab = 512;
  c.max_seq = 512;
  return c;
}

/// Logits relative error allowed per sampled row: ‖gpu − ref‖₂ / ‖ref‖₂.
constexpr double kLogitsTolerance = 2e-2;

struct Sampled {
  std::int32_t token = 0;
  std::vector<float> logits;
};

struct RunResult {
  std::map<std::pair<std::int64_t, std::int64_t>, Sampled> sampled;  // (id, position)
  std::map<std::int64_t, std::vector<std::int32_t>> tokens;          // prompt + output per id
  std::int64_t preemptions = 0, hit_tokens = 0, cow = 0, mixed_steps = 0, steps = 0;
  CudaModelStats stats;
};

RunResult run_engine(const LlamaConfig& c, bool graphs, int num_blocks, const std::vector<Request>& reqs,
                     DeviceWeights w) {
  CudaModelOptions mo;
  mo.max_seqs = test_workload::options().sched.max_num_seqs;
  mo.max_tokens = int(test_workload::options().sched.max_batched_tokens);
  mo.num_blocks = num_blocks;
  mo.cuda_graphs = graphs;
  mo.keep_logits = true;
  auto model = std::make_unique<CudaModel>(std::move(w), mo);
  model->warm_up();
  auto backend = std::make_unique<CudaBackend>(std::move(model));
  CudaBackend* be = backend.get();
  RunResult res;
  be->set_observer([&](const Sequence& s, std::int64_t pos, const float* logits, std::int32_t tok) {
    auto key = std::make_pair(s.id(), pos);
    EXPECT_EQ(res.sampled.count(key), 0u) << "position sampled twice: seq " << s.id() << " pos " << pos;
    res.sampled[key] = {tok, std::vector<float>(logits, logits + c.vocab)};
  });
  InstanceSpec spec;
  spec.num_blocks = num_blocks;
  spec.block_size = 16;
  ServingEngine engine(0, spec, test_workload::options(), std::move(backend), nullptr, Rng::derive(1, 1));
  const test_workload::DriveStats d = test_workload::drive(engine, reqs, [&](Sequence& s) {
    auto& all = res.tokens[s.id()];
    for (std::int64_t p = 0; p < s.prompt_tokens(); ++p) all.push_back(be->tokens().token(s, p));
    const auto& g = be->tokens().generated(s.id());
    all.insert(all.end(), g.begin(), g.end());
    EXPECT_EQ(std::int64_t(g.size()), s.request().output_tokens);
  });
  res.steps = d.steps;
  res.mixed_steps = d.mixed_steps;
  res.preemptions = engine.scheduler().num_preemptions();
  res.hit_tokens = engine.blocks().cache().stats.hit_tokens;
  res.cow = engine.blocks().stats().cow_copies;
  res.stats = be->model().stats();
  return res;
}

struct CheckSummary {
  std::int64_t rows = 0, near_ties = 0;
  double max_rel = 0;
};

/// Teacher-forced comparison with the reference; returns what it saw.
CheckSummary check_against_reference(const LlamaConfig& c, const std::vector<std::uint16_t>& weights,
                                     const RunResult& res) {
  const ReferenceModel ref(c, weights);
  CheckSummary sum;
  for (const auto& [id, toks] : res.tokens) {
    auto st = ref.new_state();
    for (std::size_t p = 0; p + 1 < toks.size(); ++p) {
      const std::vector<float> r = ref.step(st, toks[p]);
      auto it = res.sampled.find({id, std::int64_t(p + 1)});
      if (it == res.sampled.end()) continue;  // a prompt position: never sampled
      const Sampled& g = it->second;
      double num = 0, den = 0, max_abs = 0;
      int ref_best = 0, gpu_best = 0;
      for (int v = 0; v < c.vocab; ++v) {
        const double d = double(g.logits[std::size_t(v)]) - double(r[std::size_t(v)]);
        num += d * d;
        den += double(r[std::size_t(v)]) * r[std::size_t(v)];
        max_abs = std::max(max_abs, std::abs(d));
        if (r[std::size_t(v)] > r[std::size_t(ref_best)]) ref_best = v;
        if (g.logits[std::size_t(v)] > g.logits[std::size_t(gpu_best)]) gpu_best = v;
      }
      const double rel = std::sqrt(num / den);
      sum.max_rel = std::max(sum.max_rel, rel);
      ++sum.rows;
      EXPECT_LE(rel, kLogitsTolerance) << "seq " << id << " position " << p + 1;
      EXPECT_EQ(g.token, gpu_best) << "the GPU sampler must pick its own logits' argmax";
      EXPECT_EQ(g.token, toks[p + 1]) << "the recorded token is the sequence's token";
      if (g.token != ref_best) {
        double second = -1e30;
        for (int v = 0; v < c.vocab; ++v)
          if (v != ref_best) second = std::max(second, double(r[std::size_t(v)]));
        const double margin = double(r[std::size_t(ref_best)]) - second;
        EXPECT_LE(margin, 2 * max_abs) << "seq " << id << " position " << p + 1
                                       << ": greedy token differs from the reference without a near tie";
        ++sum.near_ties;
      }
    }
  }
  return sum;
}

void engine_matches_reference(int heads, int kv_heads, bool graphs) {
  const LlamaConfig c = tiny(heads, kv_heads);
  const std::uint64_t seed = 42;
  const auto host = WeightLayout(c).random_host(seed);
  const auto reqs = test_workload::requests(7);
  const RunResult res =
      run_engine(c, graphs, test_workload::kNumBlocks, reqs, DeviceWeights::random(c, seed));
  const CheckSummary s = check_against_reference(c, host, res);
  std::printf(
      "[engine vs reference] heads %d/%d graphs %d: %lld sampled rows, max rel logits error %.2e, %lld near "
      "ties; "
      "steps %lld (mixed %lld, eager %lld, graph %lld), preemptions %lld, prefix-hit tokens %lld, CoW copies "
      "%lld\n",
      heads, kv_heads, int(graphs), (long long)s.rows, s.max_rel, (long long)s.near_ties,
      (long long)res.steps, (long long)res.mixed_steps, (long long)res.stats.eager_steps,
      (long long)res.stats.graph_steps, (long long)res.preemptions, (long long)res.hit_tokens,
      (long long)res.cow);
  EXPECT_EQ(res.tokens.size(), reqs.size());
  EXPECT_GT(s.rows, 150);
  EXPECT_LE(s.near_ties, s.rows / 20) << "near ties should be rare";
  EXPECT_GT(res.preemptions, 0) << "the KV budget is meant to force preemption by recompute";
  EXPECT_GT(res.hit_tokens, 0) << "shared system prompts must hit the prefix cache";
  EXPECT_GT(res.mixed_steps, 0);
  EXPECT_GT(res.cow, 0) << "a fully cached prompt recomputing its shared last block must copy it";
  EXPECT_GT(res.stats.eager_steps, 0);
  if (graphs) {
    EXPECT_GT(res.stats.graph_steps, 0);
  }
}

}  // namespace

TEST(CudaEngine, RandomWeightsOnTheGpuEqualTheHostsBits) {
  REQUIRE_GPU();
  const LlamaConfig c = tiny(4, 2);
  EXPECT_EQ(DeviceWeights::random(c, 9).to_host(), WeightLayout(c).random_host(9));
}

TEST(CudaEngine, MatchesReferenceGqa2WithGraphs) {
  REQUIRE_GPU();
  engine_matches_reference(4, 2, true);
}

TEST(CudaEngine, MatchesReferenceGqa2Eager) {
  REQUIRE_GPU();
  engine_matches_reference(4, 2, false);
}

TEST(CudaEngine, MatchesReferenceMqaGroup8) {
  REQUIRE_GPU();
  engine_matches_reference(8, 1, true);
}

TEST(CudaEngine, MatchesReferenceMha) {
  REQUIRE_GPU();
  engine_matches_reference(2, 2, true);
}

TEST(CudaEngine, SafetensorsWeightsLoadIntoTheFusedLayout) {
  REQUIRE_GPU();
  const LlamaConfig c = tiny(4, 2);
  const WeightLayout L(c);
  const auto host = L.random_host(5);
  // Split the fused tensors back into Hugging Face tensors and write them over two files.
  std::map<std::string, BF16Tensor> a, b;
  int i = 0;
  for (const std::string& name : L.hf_names()) {
    const HfPlacement p = *L.hf_placement(name);
    BF16Tensor t;
    t.shape = p.rows == 1 ? std::vector<std::int64_t>{p.cols} : std::vector<std::int64_t>{p.rows, p.cols};
    const auto* src = host.data() + p.slot->offset + p.row0 * p.cols;
    t.data.assign(src, src + p.rows * p.cols);
    (i++ % 2 ? a : b)[name] = std::move(t);
  }
  const auto dir = std::filesystem::temp_directory_path();
  const std::string fa = (dir / "infraplan_engine_w1.safetensors").string();
  const std::string fb = (dir / "infraplan_engine_w2.safetensors").string();
  write_safetensors_bf16(fa, a);
  write_safetensors_bf16(fb, b);
  const auto loaded = DeviceWeights::from_safetensors(c, {fa, fb}).to_host();
  ASSERT_EQ(loaded.size(), host.size());
  for (const auto& t : L.tensors())
    for (std::int64_t e = 0; e < t.elems(); ++e)
      ASSERT_EQ(loaded[std::size_t(t.offset + e)], host[std::size_t(t.offset + e)]) << t.name << " " << e;
  EXPECT_THROW(DeviceWeights::from_safetensors(c, {fa}), Error);  // half the tensors are missing
}

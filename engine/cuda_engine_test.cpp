// The CUDA engine on a GPU against the host reference model: the simulator's scheduler, block
// manager and prefix cache drive CudaBackend through chunked prefill, prefix-cache hits,
// copy-on-write, preemption by recompute and mixed prefill/decode steps, eager and as CUDA graphs;
// every sampled position's logits are compared with ReferenceModel (teacher-forced on the
// engine's own tokens) and every greedy token with the reference's argmax. The same with fp8
// weights (W8A8) against the reference's fp8 emulation, fed the engine's activation scales of
// each row's step; and with an fp8 (E4M3) KV cache, with bf16 and with fp8 weights, against the
// reference's fp8-KV emulation. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>

#include "calib_kernels/cuda_util.hpp"
#include "common/error.hpp"
#include "engine/cuda_backend.hpp"
#include "engine/engine_test_workload.hpp"
#include "engine/fp8_e4m3.hpp"
#include "engine/reference_model.hpp"
#include "engine/safetensors.hpp"
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
  // fp8: the activation scales of every engine step ([layers][kFp8Gemms]) and the step that
  // computed each (id, position) row.
  std::vector<std::vector<float>> step_scales;
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> row_step;
  std::int64_t rows_computed_twice = 0;
};

/// The KV cache of a run: format and scales.
struct KvSetup {
  KvFormat format = KvFormat::BF16;
  KvScales scales;
};

RunResult run_engine(const LlamaConfig& c, bool graphs, int num_blocks, const std::vector<Request>& reqs,
                     DeviceWeights w, const EngineOptions& eo = test_workload::options(),
                     const std::function<void(const CudaModel&)>& on_step = {}, const KvSetup& kv = {}) {
  const bool fp8 = w.format() == WeightFormat::FP8;
  CudaModelOptions mo;
  mo.kv_format = kv.format;
  mo.kv_scales = kv.scales;
  mo.max_seqs = eo.sched.max_num_seqs;
  mo.max_tokens = int(eo.sched.max_batched_tokens);
  mo.num_blocks = num_blocks;
  mo.cuda_graphs = graphs;
  mo.keep_logits = true;
  mo.keep_activation_scales = fp8;
  mo.keep_fp8_gemm_io = fp8 && !graphs && on_step;
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
  if (fp8)
    be->set_step_observer([&](const BatchShape& b, const CudaModel& m) {
      const std::size_t step = res.step_scales.size();
      res.step_scales.push_back(m.activation_scales());
      for (const BatchItem& it : b.items)
        for (std::int64_t p = it.context - it.q_tokens; p < it.context; ++p)
          if (!res.row_step.emplace(std::make_pair(it.seq->id(), p), step).second) ++res.rows_computed_twice;
      if (on_step) on_step(m);
    });
  InstanceSpec spec;
  spec.num_blocks = num_blocks;
  spec.block_size = 16;
  ServingEngine engine(0, spec, eo, std::move(backend), nullptr, Rng::derive(1, 1));
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

/// FNV-1a over every sampled (id, position, token, logits' bytes) in key order: equal digests mean
/// bit-identical engine outputs (compares builds of the engine on the same GPU).
std::uint64_t logits_digest(const RunResult& r) {
  std::uint64_t h = 1469598103934665603ULL;
  auto mix = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ULL;
  };
  for (const auto& [key, smp] : r.sampled) {
    mix(&key.first, sizeof key.first);
    mix(&key.second, sizeof key.second);
    mix(&smp.token, sizeof smp.token);
    mix(smp.logits.data(), smp.logits.size() * sizeof(float));
  }
  return h;
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
      "%lld; logits digest %016llx\n",
      heads, kv_heads, int(graphs), (long long)s.rows, s.max_rel, (long long)s.near_ties,
      (long long)res.steps, (long long)res.mixed_steps, (long long)res.stats.eager_steps,
      (long long)res.stats.graph_steps, (long long)res.preemptions, (long long)res.hit_tokens,
      (long long)res.cow, (unsigned long long)logits_digest(res));
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

// fp8 (W8A8) in two checks. (1) Every fp8 GEMM of every eager step against the host: its
// activation scale must be exactly the amax of its own bf16 input over the step's rows / 448, and
// its output the exact product of that input and the weight, both rounded to E4M3 on the host
// (engine/fp8_e4m3.hpp), within the bf16 output rounding and fp32 accumulation (as the GEMM's own
// test). (2) The whole model against the reference's fp8 emulation, fed the engine's activation
// scale of each row's step. That comparison cannot be as tight as bf16's: the two differ first
// where the bf16 paths differ (float vs double arithmetic; the GPU's attention rounds its
// probabilities to bf16), and E4M3 amplifies such differences — an input difference δ moves about
// δ/Δ of a quantizer's elements by a whole E4M3 step Δ (2⁻³ relative), and each of a layer's
// four quantizers amplifies what the earlier ones changed. On the host, rounding the attention
// probabilities to bf16 alone moves the fp8 reference's logits by 4.8–5.1% mean, 7.4% max over 48–200
// tokens (the bf16 reference's by 0.7–1.0%; reference_model_test.cpp, Fp8AmplifiesBf16LevelDifferences),
// while fp8 against bf16 differs by 7.6–8.6%. The engine measured on the H200 (2026-12-02): 4.5–4.6%
// mean, 6.9–7.6% max, 23–31 near ties in 320 rows. Tolerances: per row 0.10 (1.3× the largest
// seen); the mean at most 0.8 of the engine's distance to the bf16 reference (0.62 seen; an
// engine whose rounding were unrelated to the reference's would be √2 ≈ 1.4 times as far from it as
// from bf16); near ties at most a sixth of the rows (a tenth seen).
constexpr double kFp8RowTolerance = 0.10;  ///< ‖gpu − ref‖₂ / ‖ref‖₂ per sampled row
constexpr double kFp8EmulationShare = 0.8;  ///< mean of that ≤ this × mean ‖gpu − bf16 ref‖₂ / ‖ref‖₂
constexpr double kFp8WithFp8KvRowTolerance = 0.13;  ///< the same with an fp8 KV cache as well

/// The host's E4M3 copy of the layers' linear weights, per [layer][fp8 GEMM]: values and scales.
struct HostFp8Weights {
  std::vector<std::vector<float>> values;
  std::vector<float> scales;
};

HostFp8Weights host_fp8_weights(const LlamaConfig& c, const std::vector<std::uint16_t>& w) {
  const WeightLayout L(c);
  HostFp8Weights h;
  for (int l = 0; l < c.layers; ++l)
    for (LayerTensor t : {LayerTensor::Qkv, LayerTensor::O, LayerTensor::GateUp, LayerTensor::Down}) {
      const TensorSlot& s = L.layer(l, t);
      std::vector<float> v(std::size_t(s.elems()));
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = bf16_value(w[std::size_t(s.offset) + i]);
      const Fp8Tensor q = fp8_quantize_tensor(v.data(), v.size());
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = fp8_e4m3_value(q.bits[i]);
      h.values.push_back(std::move(v));
      h.scales.push_back(q.scale);
    }
  return h;
}

struct GemmIoSummary {
  std::int64_t gemms = 0, rows = 0, scales_exact = 0;
  double max_rel = 0, max_worst = 0;
};

/// Check (1) on the fp8 GEMMs of the model's last step.
void check_fp8_gemm_io(const CudaModel& m, const HostFp8Weights& hw, GemmIoSummary& sum) {
  const std::vector<float>& scales = m.activation_scales();
  for (const Fp8GemmIo& g : m.fp8_gemm_io()) {
    const std::size_t slot = std::size_t(g.layer) * kFp8Gemms + std::size_t(fp8_gemm_index(g.tensor));
    float amax = 0;
    for (std::uint16_t b : g.x) amax = std::max(amax, std::fabs(bf16_value(b)));
    const float s = scales[slot];
    EXPECT_EQ(s, fp8_scale_for_amax(amax)) << "layer " << g.layer << " fp8 GEMM " << slot % kFp8Gemms;
    if (s == fp8_scale_for_amax(amax)) ++sum.scales_exact;
    std::vector<float> qx(g.x.size());
    for (std::size_t i = 0; i < qx.size(); ++i) qx[i] = fp8_e4m3_value(fp8_quantize(bf16_value(g.x[i]), s));
    const std::vector<float>& wv = hw.values[slot];
    const double scale = double(s) * double(hw.scales[slot]);
    double num = 0, den = 0, worst = 0, ymax = 0;
    for (int r = 0; r < g.rows; ++r)
      for (int j = 0; j < g.n; ++j) {
        const float* xr = qx.data() + std::size_t(r) * std::size_t(g.k);
        const float* wr = wv.data() + std::size_t(j) * std::size_t(g.k);
        double acc = 0;
        for (int t = 0; t < g.k; ++t) acc += double(xr[t]) * double(wr[t]);
        const double exact = acc * scale;
        const double d = double(bf16_value(g.y[std::size_t(r) * std::size_t(g.n) + std::size_t(j)])) - exact;
        num += d * d;
        den += exact * exact;
        worst = std::max(worst, std::abs(d));
        ymax = std::max(ymax, std::abs(exact));
      }
    const double rel = den > 0 ? std::sqrt(num / den) : 0.0;
    EXPECT_LT(rel, 3e-3) << "layer " << g.layer << " fp8 GEMM " << slot % kFp8Gemms << ", " << g.rows
                         << " rows";
    EXPECT_LT(worst, 8e-3 * ymax) << "layer " << g.layer << " fp8 GEMM " << slot % kFp8Gemms;
    sum.max_rel = std::max(sum.max_rel, rel);
    sum.max_worst = std::max(sum.max_worst, ymax > 0 ? worst / ymax : 0.0);
    ++sum.gemms;
    sum.rows += g.rows;
  }
}

/// One sampled row of the GPU's logits against a reference's (`r`) and a second reference's
/// (`other`): relative L2 errors, the largest absolute difference, both argmaxes and the
/// reference's top-2 margin (what a near tie is measured by).
struct RowComparison {
  double rel = 0, rel_other = 0, max_abs = 0, ref_margin = 0;
  int ref_best = 0, gpu_best = 0;
};

RowComparison compare_row(const std::vector<float>& gpu, const std::vector<float>& r,
                          const std::vector<float>& other, int vocab) {
  RowComparison k;
  double num = 0, num_other = 0, den = 0;
  for (int v = 0; v < vocab; ++v) {
    const std::size_t u = std::size_t(v);
    const double d = double(gpu[u]) - double(r[u]), db = double(gpu[u]) - double(other[u]);
    num += d * d;
    num_other += db * db;
    den += double(r[u]) * r[u];
    k.max_abs = std::max(k.max_abs, std::abs(d));
    if (r[u] > r[std::size_t(k.ref_best)]) k.ref_best = v;
    if (gpu[u] > gpu[std::size_t(k.gpu_best)]) k.gpu_best = v;
  }
  k.rel = std::sqrt(num / den);
  k.rel_other = std::sqrt(num_other / den);
  double second = -1e30;
  for (int v = 0; v < vocab; ++v)
    if (v != k.ref_best) second = std::max(second, double(r[std::size_t(v)]));
  k.ref_margin = double(r[std::size_t(k.ref_best)]) - second;
  return k;
}

struct Fp8Summary {
  std::int64_t rows = 0, near_ties = 0, scale_slots = 0, scales_exact = 0;
  double max_rel = 0, mean_rel = 0, mean_rel_vs_bf16 = 0, max_scale_rel = 0, max_scale_rel_layer0_qkv = 0;
};

Fp8Summary check_fp8_against_reference(const LlamaConfig& c, const std::vector<std::uint16_t>& weights,
                                       const RunResult& res, const KvSetup& kv = {}) {
  const ReferenceModel ref(c, weights, WeightFormat::FP8, kv.format, kv.scales), ref_bf16(c, weights);
  const std::size_t slots = std::size_t(c.layers) * kFp8Gemms;
  std::vector<std::vector<float>> step_amax(res.step_scales.size(), std::vector<float>(slots, 0.0f));
  Fp8Summary sum;
  for (const auto& [id, toks] : res.tokens) {
    auto st = ref.new_state();
    auto sb = ref_bf16.new_state();
    for (std::size_t p = 0; p + 1 < toks.size(); ++p) {
      const auto rs = res.row_step.find({id, std::int64_t(p)});
      if (rs == res.row_step.end()) {
        ADD_FAILURE() << "seq " << id << " position " << p << " was never computed";
        return sum;
      }
      const std::vector<float>& scales = res.step_scales[rs->second];
      if (scales.size() != slots) {
        ADD_FAILURE() << "step " << rs->second << " has " << scales.size() << " activation scales";
        return sum;
      }
      std::vector<float> row_amax(slots, 0.0f);
      const std::vector<float> r = ref.step(st, toks[p], {scales.data(), row_amax.data()});
      const std::vector<float> rb = ref_bf16.step(sb, toks[p]);
      for (std::size_t i = 0; i < slots; ++i)
        step_amax[rs->second][i] = std::max(step_amax[rs->second][i], row_amax[i]);
      auto it = res.sampled.find({id, std::int64_t(p + 1)});
      if (it == res.sampled.end()) continue;  // a prompt position: never sampled
      const Sampled& g = it->second;
      const RowComparison k = compare_row(g.logits, r, rb, c.vocab);
      sum.max_rel = std::max(sum.max_rel, k.rel);
      sum.mean_rel += k.rel;
      sum.mean_rel_vs_bf16 += k.rel_other;
      ++sum.rows;
      EXPECT_LE(k.rel, kv.format == KvFormat::FP8 ? kFp8WithFp8KvRowTolerance : kFp8RowTolerance)
          << "seq " << id << " position " << p + 1;
      EXPECT_EQ(g.token, k.gpu_best) << "the GPU sampler must pick its own logits' argmax";
      EXPECT_EQ(g.token, toks[p + 1]) << "the recorded token is the sequence's token";
      if (g.token != k.ref_best) {
        EXPECT_LE(k.ref_margin, 2 * k.max_abs)
            << "seq " << id << " position " << p + 1
            << ": greedy token differs from the fp8 reference without a near tie";
        ++sum.near_ties;
      }
    }
  }
  if (sum.rows > 0) {
    sum.mean_rel /= double(sum.rows);
    sum.mean_rel_vs_bf16 /= double(sum.rows);
  }
  // The engine's scale of each step and GEMM input is the amax over the step's rows / 448: the
  // reference's rows of that step give it independently (up to bf16-level differences).
  for (std::size_t step = 0; step < step_amax.size(); ++step)
    for (std::size_t i = 0; i < slots; ++i) {
      const float want = fp8_scale_for_amax(step_amax[step][i]), got = res.step_scales[step][i];
      const double rel = std::abs(double(got) - double(want)) / double(want);
      ++sum.scale_slots;
      if (got == want) ++sum.scales_exact;
      sum.max_scale_rel = std::max(sum.max_scale_rel, rel);
      if (i == 0) sum.max_scale_rel_layer0_qkv = std::max(sum.max_scale_rel_layer0_qkv, rel);
    }
  return sum;
}

/// Runs the fp8 engine (eager steps also through check (1)) and check (2); returns the run. With
/// an fp8 KV cache (kv) the reference emulates it too, and the per-row tolerance widens with the
/// two more quantizers per layer (keys and values beside the four GEMM inputs): 0.10 · √(6/4) ≈ 0.13.
RunResult engine_fp8_matches_reference(int heads, int kv_heads, bool graphs, const KvSetup& kv = {}) {
  const LlamaConfig c = tiny(heads, kv_heads);
  const std::uint64_t seed = 42;
  const auto host = WeightLayout(c).random_host(seed);
  const auto reqs = test_workload::requests(7);
  const HostFp8Weights hw = host_fp8_weights(c, host);
  GemmIoSummary io;
  std::function<void(const CudaModel&)> on_step;
  if (!graphs) on_step = [&](const CudaModel& m) { check_fp8_gemm_io(m, hw, io); };
  RunResult res =
      run_engine(c, graphs, test_workload::kFp8NumBlocks, reqs,
                 DeviceWeights::random(c, seed, WeightFormat::FP8), test_workload::fp8_options(), on_step, kv);
  if (!graphs)
    std::printf(
        "[engine fp8 GEMMs vs host E4M3 product] heads %d/%d: %lld GEMMs over %lld rows, %lld of them with "
        "the "
        "activation scale of their own input's amax exactly; output rel error max %.2e, largest |error| %.2e "
        "of "
        "the largest output\n",
        heads, kv_heads, (long long)io.gemms, (long long)io.rows, (long long)io.scales_exact, io.max_rel,
        io.max_worst);
  const Fp8Summary s = check_fp8_against_reference(c, host, res, kv);
  std::printf(
      "[engine fp8 vs fp8 reference] heads %d/%d graphs %d KV %s: %lld sampled rows, rel logits error max %.2e "
      "mean "
      "%.2e (vs the bf16 reference: mean %.2e), %lld near ties; activation scales: %lld of %lld equal the "
      "reference's, max rel diff %.2e (layer 0 QKV input %.2e); steps %lld (mixed %lld, eager %lld, graph "
      "%lld); "
      "logits digest %016llx\n",
      heads, kv_heads, int(graphs), kv_format_name(kv.format), (long long)s.rows, s.max_rel, s.mean_rel,
      s.mean_rel_vs_bf16, (long long)s.near_ties, (long long)s.scales_exact, (long long)s.scale_slots, s.max_scale_rel,
      s.max_scale_rel_layer0_qkv, (long long)res.steps, (long long)res.mixed_steps,
      (long long)res.stats.eager_steps, (long long)res.stats.graph_steps,
      (unsigned long long)logits_digest(res));
  EXPECT_EQ(res.tokens.size(), reqs.size());
  EXPECT_EQ(res.rows_computed_twice, 0);
  EXPECT_EQ(res.preemptions, 0);
  EXPECT_EQ(res.hit_tokens, 0);
  EXPECT_GT(s.rows, 150);
  EXPECT_LE(s.mean_rel, kFp8EmulationShare * s.mean_rel_vs_bf16)
      << "the fp8 emulation must explain most of what fp8 changes";
  EXPECT_LE(s.near_ties, s.rows / 6) << "near ties should stay a minority";
  EXPECT_GT(s.scale_slots, 0);
  EXPECT_LE(s.max_scale_rel_layer0_qkv, 1.0 / 128) << "the first GEMM input differs by at most one bf16 step";
  EXPECT_GT(res.mixed_steps, 0);
  EXPECT_GT(res.stats.eager_steps, 0);
  if (graphs) {
    EXPECT_GT(res.stats.graph_steps, 0);
  } else {
    EXPECT_GT(io.gemms, 4 * c.layers * 50) << "every eager step's fp8 GEMMs are checked";
    EXPECT_EQ(io.scales_exact, io.gemms);
  }
  return res;
}

// fp8 KV with bf16 weights: the whole model against the reference's fp8-KV emulation (keys and
// values rounded to E4M3 under the same static scales before attention), through the bf16 test's
// workload — prefix-cache hits, copy-on-write of fp8 blocks, preemption by recompute, graphs — since
// nothing in it depends on a step (the scales are static). The engine and the reference differ at
// the bf16 level (bf16 test: ≤ 1.1% per row), and quantizing keys and values turns some of that into
// whole E4M3 steps. The host experiment ReferenceModel.Fp8KvAmplifiesBf16LevelDifferencesLess
// measures that amplification: the GPU's bf16 attention probabilities alone move the bf16
// reference by 0.76% and the fp8-KV reference by 1.07% (1.4×), while fp8 KV itself moves the logits
// by 3.3%. Tolerances: per row the bf16 test's 2·10⁻² × 1.4 ≈ 3·10⁻²; the mean at most 0.6 of the
// engine's distance to the bf16-KV reference (about a third expected; an engine whose rounding
// were unrelated to the reference's would be as far from it as from bf16 KV); near ties at most a
// tenth of the rows (bf16: 2–7 of 320).
constexpr double kFp8KvRowTolerance = 3e-2;
constexpr double kFp8KvEmulationShare = 0.6;

struct Fp8KvSummary {
  std::int64_t rows = 0, near_ties = 0;
  double max_rel = 0, mean_rel = 0, mean_rel_vs_bf16_kv = 0;
};

Fp8KvSummary check_fp8kv_against_reference(const LlamaConfig& c, const std::vector<std::uint16_t>& weights,
                                           const RunResult& res, const KvSetup& kv) {
  const ReferenceModel ref(c, weights, WeightFormat::BF16, KvFormat::FP8, kv.scales), ref_bf16(c, weights);
  Fp8KvSummary sum;
  for (const auto& [id, toks] : res.tokens) {
    auto st = ref.new_state();
    auto sb = ref_bf16.new_state();
    for (std::size_t p = 0; p + 1 < toks.size(); ++p) {
      const std::vector<float> r = ref.step(st, toks[p]);
      const std::vector<float> rb = ref_bf16.step(sb, toks[p]);
      auto it = res.sampled.find({id, std::int64_t(p + 1)});
      if (it == res.sampled.end()) continue;  // a prompt position: never sampled
      const Sampled& g = it->second;
      const RowComparison k = compare_row(g.logits, r, rb, c.vocab);
      sum.max_rel = std::max(sum.max_rel, k.rel);
      sum.mean_rel += k.rel;
      sum.mean_rel_vs_bf16_kv += k.rel_other;
      ++sum.rows;
      EXPECT_LE(k.rel, kFp8KvRowTolerance) << "seq " << id << " position " << p + 1;
      EXPECT_EQ(g.token, k.gpu_best) << "the GPU sampler must pick its own logits' argmax";
      EXPECT_EQ(g.token, toks[p + 1]) << "the recorded token is the sequence's token";
      if (g.token != k.ref_best) {
        EXPECT_LE(k.ref_margin, 2 * k.max_abs)
            << "seq " << id << " position " << p + 1
            << ": greedy token differs from the fp8-KV reference without a near tie";
        ++sum.near_ties;
      }
    }
  }
  if (sum.rows > 0) {
    sum.mean_rel /= double(sum.rows);
    sum.mean_rel_vs_bf16_kv /= double(sum.rows);
  }
  return sum;
}

void engine_fp8kv_matches_reference(int heads, int kv_heads, bool graphs, const KvScales& scales) {
  const LlamaConfig c = tiny(heads, kv_heads);
  const std::uint64_t seed = 42;
  const auto host = WeightLayout(c).random_host(seed);
  const auto reqs = test_workload::requests(7);
  const KvSetup kv{KvFormat::FP8, scales};
  // The bf16 test's KV budget in blocks (the same preemptions; fp8 blocks are half the bytes).
  const RunResult res = run_engine(c, graphs, test_workload::kNumBlocks, reqs, DeviceWeights::random(c, seed),
                                   test_workload::options(), {}, kv);
  const Fp8KvSummary s = check_fp8kv_against_reference(c, host, res, kv);
  std::printf(
      "[engine fp8 KV vs fp8-KV reference] heads %d/%d graphs %d scales %s: %lld sampled rows, rel logits error "
      "max %.2e mean %.2e (vs the bf16-KV reference: mean %.2e), %lld near ties; steps %lld (mixed %lld, eager "
      "%lld, graph %lld), preemptions %lld, prefix-hit tokens %lld, CoW copies %lld; logits digest %016llx\n",
      heads, kv_heads, int(graphs), scales.kv.empty() ? "1" : "per layer", (long long)s.rows, s.max_rel, s.mean_rel,
      s.mean_rel_vs_bf16_kv, (long long)s.near_ties, (long long)res.steps, (long long)res.mixed_steps,
      (long long)res.stats.eager_steps, (long long)res.stats.graph_steps, (long long)res.preemptions,
      (long long)res.hit_tokens, (long long)res.cow, (unsigned long long)logits_digest(res));
  EXPECT_EQ(res.tokens.size(), reqs.size());
  EXPECT_GT(s.rows, 150);
  EXPECT_LE(s.mean_rel, kFp8KvEmulationShare * s.mean_rel_vs_bf16_kv)
      << "the fp8-KV emulation must explain most of what fp8 KV changes";
  EXPECT_LE(s.near_ties, s.rows / 10) << "near ties should be rare";
  EXPECT_GT(res.preemptions, 0) << "the KV budget is meant to force preemption by recompute";
  EXPECT_GT(res.hit_tokens, 0) << "shared system prompts must hit the prefix cache";
  EXPECT_GT(res.cow, 0) << "a fully cached prompt recomputing its shared last block must copy it";
  EXPECT_GT(res.mixed_steps, 0);
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

TEST(CudaEngine, Fp8GemmsAndModelMatchTheHostEager) {
  REQUIRE_GPU();
  engine_fp8_matches_reference(4, 2, false);
}

TEST(CudaEngine, Fp8MatchesFp8ReferenceGqa2WithGraphs) {
  REQUIRE_GPU();
  engine_fp8_matches_reference(4, 2, true);
}

TEST(CudaEngine, Fp8MatchesFp8ReferenceMqaGroup8) {
  REQUIRE_GPU();
  engine_fp8_matches_reference(8, 1, true);
}

TEST(CudaEngine, Fp8KvMatchesFp8KvReferenceGqa2WithGraphs) {
  REQUIRE_GPU();
  engine_fp8kv_matches_reference(4, 2, true, {});
}

TEST(CudaEngine, Fp8KvMatchesFp8KvReferenceGqa2Eager) {
  REQUIRE_GPU();
  engine_fp8kv_matches_reference(4, 2, false, {});
}

TEST(CudaEngine, Fp8KvWithPerLayerScalesMqaGroup8) {
  REQUIRE_GPU();
  engine_fp8kv_matches_reference(8, 1, true, KvScales{{0.5f, 0.25f, 2.0f, 1.5f}});
}

TEST(CudaEngine, Fp8WeightsAndFp8KvMatchTheReferenceWithGraphs) {
  REQUIRE_GPU();
  engine_fp8_matches_reference(4, 2, true, KvSetup{KvFormat::FP8, {}});
}

TEST(CudaEngine, Fp8WeightsAndFp8KvGemmsMatchTheHostEager) {
  REQUIRE_GPU();
  engine_fp8_matches_reference(8, 1, false, KvSetup{KvFormat::FP8, {}});
}

// The host reference model: deterministic, causal, and sensitive to what it should be.
#include "engine/reference_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "common/error.hpp"
#include "engine/fp8_e4m3.hpp"

using namespace infraplan::engine;

namespace {
LlamaConfig small(int heads, int kv_heads) {
  LlamaConfig c;
  c.name = "ref-small";
  c.layers = 2;
  c.hidden = 64;
  c.heads = heads;
  c.kv_heads = kv_heads;
  c.ffn = 128;
  c.vocab = 97;
  c.max_seq = 32;
  return c;
}
std::vector<std::vector<float>> run(const ReferenceModel& m, const std::vector<int>& toks) {
  auto st = m.new_state();
  std::vector<std::vector<float>> out;
  for (int t : toks) out.push_back(m.step(st, t));
  return out;
}
double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::abs(a[i] - b[i])));
  return d;
}
}  // namespace

TEST(ReferenceModel, DeterministicAndCausal) {
  const LlamaConfig c = small(2, 1);
  const ReferenceModel m(c, WeightLayout(c).random_host(5));
  const auto a = run(m, {3, 14, 15, 92, 65});
  const auto b = run(m, {3, 14, 15, 92, 65});
  ASSERT_EQ(a.size(), 5u);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]);
  // Changing the last token changes only the last logits (causality).
  const auto d = run(m, {3, 14, 15, 92, 66});
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(a[i], d[i]) << i;
  EXPECT_GT(max_abs_diff(a[4], d[4]), 1e-3);
  // Changing an earlier token changes later logits (attention reaches back).
  const auto e = run(m, {4, 14, 15, 92, 65});
  EXPECT_GT(max_abs_diff(a[4], e[4]), 1e-3);
  // Logits are finite and spread (the LM head's gain), not a constant.
  double lo = 1e9, hi = -1e9;
  for (float x : a[4]) {
    ASSERT_TRUE(std::isfinite(x));
    lo = std::min(lo, double(x));
    hi = std::max(hi, double(x));
  }
  EXPECT_GT(hi - lo, 2.0);
}

TEST(ReferenceModel, PositionMattersThroughRope) {
  // Without positions, attention of the last query over the keys {3, 7, 9} would not depend on
  // their order; with rotary embeddings it does.
  const LlamaConfig c = small(4, 2);
  const ReferenceModel m(c, WeightLayout(c).random_host(9));
  const auto a = run(m, {3, 7, 9}), b = run(m, {7, 3, 9});
  EXPECT_GT(max_abs_diff(a[2], b[2]), 1e-4);
  // Identical tokens everywhere: every value is the same, so the output is too, whatever the
  // positions (a check of the attention average itself).
  const auto d = run(m, {7, 7, 7});
  EXPECT_LT(max_abs_diff(d[1], d[2]), 1e-6);
}

TEST(ReferenceModel, RefusesBadInput) {
  const LlamaConfig c = small(2, 2);
  const ReferenceModel m(c, WeightLayout(c).random_host(1));
  auto st = m.new_state();
  EXPECT_THROW(m.step(st, 97), infraplan::Error);
  EXPECT_THROW(ReferenceModel(c, std::vector<std::uint16_t>(10)), infraplan::Error);
}

namespace {
double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += double(a[i] - b[i]) * double(a[i] - b[i]);
    den += double(b[i]) * double(b[i]);
  }
  return std::sqrt(num / den);
}
}  // namespace

TEST(ReferenceModel, Fp8WeightScalesAreTheTensorsAmaxOver448) {
  const LlamaConfig c = small(4, 2);
  const auto w = WeightLayout(c).random_host(3);
  const ReferenceModel m(c, w, WeightFormat::FP8);
  const WeightLayout L(c);
  for (int l = 0; l < c.layers; ++l)
    for (LayerTensor t : {LayerTensor::Qkv, LayerTensor::O, LayerTensor::GateUp, LayerTensor::Down}) {
      const TensorSlot& s = L.layer(l, t);
      float amax = 0;
      for (std::int64_t i = 0; i < s.elems(); ++i)
        amax = std::max(amax, std::abs(bf16_value(w[std::size_t(s.offset + i)])));
      EXPECT_EQ(m.weight_scale(l, t), amax / 448.0f) << s.name;
    }
  EXPECT_THROW(m.weight_scale(0, LayerTensor::AttnNorm), infraplan::Error);
  EXPECT_THROW(ReferenceModel(c, w).weight_scale(0, LayerTensor::Qkv), infraplan::Error);
}

TEST(ReferenceModel, Fp8IsCloseToBf16ButNotEqual) {
  const LlamaConfig c = small(4, 2);
  const auto w = WeightLayout(c).random_host(5);
  const ReferenceModel bf(c, w), f8(c, w, WeightFormat::FP8);
  const std::vector<int> toks = {3, 14, 15, 92, 65, 35, 89};
  const auto a = run(bf, toks), b = run(f8, toks);
  const auto again = run(f8, toks);
  for (std::size_t i = 0; i < toks.size(); ++i) {
    EXPECT_EQ(b[i], again[i]) << "deterministic";
    // E4M3 keeps 3 mantissa bits (relative rounding error ≤ 2⁻⁴, ~2% rms per element) in
    // four GEMMs per layer: the logits move by a few percent, not by nothing and not wholesale.
    const double r = rel_diff(b[i], a[i]);
    EXPECT_GT(r, 1e-3) << i;
    EXPECT_LT(r, 0.25) << i;
  }
}

TEST(ReferenceModel, Fp8ActivationScalesComeFromTheStep) {
  const LlamaConfig c = small(2, 1);
  const ReferenceModel m(c, WeightLayout(c).random_host(7), WeightFormat::FP8);
  const std::size_t slots = std::size_t(c.layers) * kFp8Gemms;
  // Alone in its step, a row takes its own amax: passing those scales changes nothing.
  auto s1 = m.new_state();
  std::vector<float> amax(slots, -1.0f);
  const auto own = m.step(s1, 42, {nullptr, amax.data()});
  std::vector<float> scales(slots);
  for (std::size_t i = 0; i < slots; ++i) {
    ASSERT_GT(amax[i], 0.0f) << i;
    scales[i] = amax[i] / 448.0f;
  }
  auto s2 = m.new_state();
  EXPECT_EQ(m.step(s2, 42, {scales.data(), nullptr}), own);
  // A step whose other rows are larger gives this row a coarser grid: different logits.
  for (float& s : scales) s *= 3.0f;
  auto s3 = m.new_state();
  const auto coarse = m.step(s3, 42, {scales.data(), nullptr});
  EXPECT_GT(rel_diff(coarse, own), 1e-4);
  EXPECT_LT(rel_diff(coarse, own), 0.5);
}

TEST(ReferenceModel, Fp8AmplifiesBf16LevelDifferences) {
  // Why the fp8 engine test's tolerances are wider than bf16's (cuda_engine_test.cpp): rounding the
  // attention probabilities to bf16, as the GPU's kernels do, changes the bf16 model's logits by
  // about 1%, but the fp8 model's by several percent — an input difference δ moves about δ/Δ of
  // a quantizer's elements by a whole E4M3 step Δ, and each of a layer's four quantizers
  // amplifies what the previous ones changed.
  LlamaConfig c = small(4, 2);
  c.hidden = 256;
  c.ffn = 512;
  c.vocab = 256;
  c.max_seq = 64;
  const auto w = WeightLayout(c).random_host(42);
  ReferenceModel bf(c, w), bf_p(c, w), f8(c, w, WeightFormat::FP8), f8_p(c, w, WeightFormat::FP8);
  bf_p.set_bf16_attention_probabilities(true);
  f8_p.set_bf16_attention_probabilities(true);
  auto sb = bf.new_state(), sbp = bf_p.new_state(), sf = f8.new_state(), sfp = f8_p.new_state();
  double d_bf16 = 0, d_fp8 = 0, d_format = 0;
  const int n = 48;
  for (int p = 0; p < n; ++p) {
    const int tok = (p * 37 + 11) % c.vocab;
    const auto a = bf.step(sb, tok), ap = bf_p.step(sbp, tok), f = f8.step(sf, tok), fp = f8_p.step(sfp, tok);
    d_bf16 += rel_diff(ap, a) / n;
    d_fp8 += rel_diff(fp, f) / n;
    d_format += rel_diff(f, a) / n;
  }
  EXPECT_GT(d_bf16, 1e-4) << "the rounding changes something";
  EXPECT_LT(d_bf16, 1.5e-2);
  EXPECT_GT(d_fp8, 3 * d_bf16) << "fp8 amplifies it";
  EXPECT_LT(d_fp8, d_format) << "but stays below what fp8 itself changes";
  std::printf(
      "[fp8 amplification] mean rel logits change from bf16 attention probabilities: bf16 %.2e, fp8 %.2e; "
      "fp8 vs bf16 %.2e\n",
      d_bf16, d_fp8, d_format);
}

TEST(ReferenceModel, Fp8KvCacheHoldsTheE4M3OfTheBf16Cache) {
  const LlamaConfig c = small(4, 2);
  const auto w = WeightLayout(c).random_host(11);
  const KvScales scales{{0.5f, 0.25f, 2.0f, 1.0f}};  // layer 0 key, value; layer 1 key, value
  const ReferenceModel bf(c, w), f8(c, w, WeightFormat::BF16, KvFormat::FP8, scales);
  EXPECT_EQ(f8.kv_format(), KvFormat::FP8);
  auto sb = bf.new_state(), sf = f8.new_state();
  for (int t : {5, 17, 60}) {
    bf.step(sb, t);
    f8.step(sf, t);
  }
  // Layer 0 sees the same inputs in both: its cache holds exactly the E4M3 codes of the bf16
  // model's keys and values under the layer's scales (as the GPU's cache write stores them).
  ASSERT_EQ(sf.k[0].size(), sb.k[0].size());
  int saturated_or_rounded = 0;
  for (std::size_t i = 0; i < sb.k[0].size(); ++i) {
    EXPECT_EQ(sf.k[0][i], fp8_e4m3_value(fp8_quantize(sb.k[0][i], scales.k(0)))) << i;
    EXPECT_EQ(sf.v[0][i], fp8_e4m3_value(fp8_quantize(sb.v[0][i], scales.v(0)))) << i;
    if (sf.k[0][i] * scales.k(0) != sb.k[0][i]) ++saturated_or_rounded;
  }
  EXPECT_GT(saturated_or_rounded, 0) << "E4M3 keeps fewer bits than bf16";
}

TEST(ReferenceModel, Fp8KvIsCloseToBf16KvAndItsScalesMatter) {
  const LlamaConfig c = small(4, 2);
  const auto w = WeightLayout(c).random_host(5);
  const std::vector<int> toks = {3, 14, 15, 92, 65, 35, 89, 79, 32, 38};
  const ReferenceModel bf(c, w), f8(c, w, WeightFormat::BF16, KvFormat::FP8);
  const auto a = run(bf, toks), b = run(f8, toks), again = run(f8, toks);
  // A scale of 0.003 saturates every |x| > 1.34 (448 · 0.003); 2⁶ puts every |x| < 1 into E4M3's
  // subnormals (below 2⁻⁶ · 64). A power of two that keeps every value in the normal range would
  // change nothing: x / 2ᵏ rounds exactly as x does.
  std::vector<float> tiny_scale(std::size_t(2 * c.layers), 0.003f), huge_scale(std::size_t(2 * c.layers), 64.0f);
  const auto t = run(ReferenceModel(c, w, WeightFormat::BF16, KvFormat::FP8, {tiny_scale}), toks);
  const auto h = run(ReferenceModel(c, w, WeightFormat::BF16, KvFormat::FP8, {huge_scale}), toks);
  double mean = 0, mean_huge = 0;
  for (std::size_t i = 0; i < toks.size(); ++i) {
    EXPECT_EQ(b[i], again[i]) << "deterministic";
    // One E4M3 rounding of keys and values per layer (≤ 2⁻⁴ relative per element): the logits
    // move, by less than fp8 weights move them (four quantized GEMMs per layer).
    const double r = rel_diff(b[i], a[i]);
    EXPECT_GT(r, 1e-4) << i;
    EXPECT_LT(r, 0.1) << i;
    mean += r / double(toks.size());
    mean_huge += rel_diff(h[i], a[i]) / double(toks.size());
    EXPECT_NE(t[i], b[i]) << "a scale that saturates keys and values changes the logits";
  }
  // Measured 1.4× (4.9% against 3.5%): most keys and values of this model are 0.1–4 in size.
  EXPECT_GT(mean_huge, 1.2 * mean) << "values pushed into E4M3's subnormals lose precision";
  std::printf("[fp8 KV] mean rel logits change vs bf16 KV: scale 1 %.2e, scale 64 %.2e\n", mean, mean_huge);
}

TEST(ReferenceModel, Fp8KvAmplifiesBf16LevelDifferencesLess) {
  // The fp8-KV engine test's tolerances (cuda_engine_test.cpp): the engine and the reference differ
  // at the bf16 level (float vs double, bf16 attention probabilities); the keys and values they
  // quantize then differ by whole E4M3 steps now and then. With one quantization of K and V per
  // layer that amplification is far smaller than W8A8's four quantized GEMM inputs.
  LlamaConfig c = small(4, 2);
  c.hidden = 256;
  c.ffn = 512;
  c.vocab = 256;
  c.max_seq = 64;
  const auto w = WeightLayout(c).random_host(42);
  ReferenceModel bf(c, w), bf_p(c, w), kv(c, w, WeightFormat::BF16, KvFormat::FP8),
      kv_p(c, w, WeightFormat::BF16, KvFormat::FP8);
  bf_p.set_bf16_attention_probabilities(true);
  kv_p.set_bf16_attention_probabilities(true);
  auto sb = bf.new_state(), sbp = bf_p.new_state(), sk = kv.new_state(), skp = kv_p.new_state();
  double d_bf16 = 0, d_kv = 0, d_format = 0, max_kv = 0;
  const int n = 48;
  for (int p = 0; p < n; ++p) {
    const int tok = (p * 37 + 11) % c.vocab;
    const auto a = bf.step(sb, tok), ap = bf_p.step(sbp, tok), k = kv.step(sk, tok), kp = kv_p.step(skp, tok);
    d_bf16 += rel_diff(ap, a) / n;
    d_kv += rel_diff(kp, k) / n;
    max_kv = std::max(max_kv, rel_diff(kp, k));
    d_format += rel_diff(k, a) / n;
  }
  // Measured: bf16 KV 0.76%, fp8 KV 1.07% mean (1.45% max), fp8 KV against bf16 KV 3.3%.
  EXPECT_GT(d_bf16, 1e-4) << "the rounding changes something";
  EXPECT_GT(d_kv, d_bf16) << "fp8 KV amplifies it";
  EXPECT_LT(d_kv, 2 * d_bf16) << "by far less than W8A8's four quantizers per layer (6.7×)";
  EXPECT_LT(d_kv, 0.5 * d_format) << "and well below what fp8 KV itself changes";
  std::printf(
      "[fp8 KV amplification] mean rel logits change from bf16 attention probabilities: bf16 KV %.2e, fp8 KV "
      "%.2e (max %.2e); fp8 KV vs bf16 KV %.2e\n",
      d_bf16, d_kv, max_kv, d_format);
}

TEST(ReferenceModel, RefusesKvScalesOfTheWrongShape) {
  const LlamaConfig c = small(2, 1);
  const auto w = WeightLayout(c).random_host(1);
  EXPECT_THROW(ReferenceModel(c, w, WeightFormat::BF16, KvFormat::FP8, {{1.0f, 1.0f}}), infraplan::Error);
  EXPECT_THROW(ReferenceModel(c, w, WeightFormat::BF16, KvFormat::FP8, {{1.0f, 1.0f, 0.0f, 1.0f}}),
               infraplan::Error);
  EXPECT_NO_THROW(ReferenceModel(c, w, WeightFormat::FP8, KvFormat::FP8, {{1.0f, 2.0f, 0.5f, 1.0f}}));
}

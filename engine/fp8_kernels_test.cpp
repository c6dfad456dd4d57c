// The fp8 (W8A8) building blocks on the GPU against the host: the quantize kernel against
// engine/fp8_e4m3.hpp on every bf16 value, the amax reductions (live rows only, fused into the
// norm and SwiGLU without changing their bf16 outputs), the weights quantized at load, and
// cuBLASLt's E4M3 GEMM against the exact product of its inputs — also replayed from a CUDA
// graph with new inputs, whose scales it must read from device memory. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"
#include "engine/device_weights.hpp"
#include "engine/fp8_e4m3.hpp"
#include "engine/fp8_kernels.hpp"
#include "engine/lt_gemm.hpp"

using namespace infraplan;
using namespace infraplan::engine;

namespace {

#define REQUIRE_GPU() \
  if (!calib::gpu_available()) GTEST_SKIP() << "no CUDA GPU"

using calib::to_device;
using calib::to_host;

float scalar(const float* d) {
  float v = 0;
  CALIB_CUDA(cudaMemcpy(&v, d, sizeof(float), cudaMemcpyDeviceToHost));
  return v;
}

void set_scalar(float* d, float v) { CALIB_CUDA(cudaMemcpy(d, &v, sizeof(float), cudaMemcpyHostToDevice)); }

/// Same value, or both NaN (±0 compare equal).
bool same_value(std::uint8_t a, std::uint8_t b) {
  const float x = fp8_e4m3_value(a), y = fp8_e4m3_value(b);
  return x == y || (std::isnan(x) && std::isnan(y));
}

/// Random bf16 bits: value offset + spread · u.
std::vector<std::uint16_t> random_bf16(std::size_t n, float spread, std::uint32_t id) {
  std::vector<std::uint16_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = bf16_bits(weight_value({0.0f, spread}, 99, id, i));
  return v;
}

}  // namespace

TEST(Fp8Kernels, QuantizeMatchesTheHostOnEveryBf16Value) {
  REQUIRE_GPU();
  std::vector<std::uint16_t> all(65536);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = std::uint16_t(i);
  auto x = to_device(all);
  calib::DeviceBuffer<fp8> q(all.size());
  calib::DeviceBuffer<float> amax(1), scale(1);
  // Scale 1 (amax 448: the conversion alone), a scale below 1, one above, and an all-zero tensor.
  for (const float a : {448.0f, 3.7f, 1.0e5f, 0.0f}) {
    set_scalar(amax.get(), a);
    quantize_fp8(reinterpret_cast<const bf16*>(x.get()), std::int64_t(all.size()), amax.get(), q.get(),
                 scale.get(), nullptr);
    const float s = fp8_scale_for_amax(a);
    EXPECT_EQ(scalar(scale.get()), s) << "amax " << a;
    std::vector<std::uint8_t> got(all.size());
    CALIB_CUDA(cudaMemcpy(got.data(), q.get(), got.size(), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
      const std::uint8_t want = fp8_quantize(bf16_value(all[i]), s);
      if (!same_value(got[i], want) && bad++ < 5)
        ADD_FAILURE() << "amax " << a << ": bf16 0x" << std::hex << all[i] << " → gpu 0x" << int(got[i])
                      << ", host 0x" << int(want);
    }
    EXPECT_EQ(bad, 0) << "amax " << a;
  }
}

TEST(Fp8Kernels, AmaxCountsTheLiveRowsOnly) {
  REQUIRE_GPU();
  const int rows = 37, cols = 264;
  auto h = random_bf16(std::size_t(rows) * cols, 2.0f, 1);
  h[std::size_t(30) * cols + 5] = bf16_bits(-900.0f);  // a padding row's outlier
  auto x = to_device(h);
  auto host_amax = [&](int live) {
    float m = 0;
    for (std::size_t i = 0; i < std::size_t(live) * cols; ++i) m = std::max(m, std::fabs(bf16_value(h[i])));
    return m;
  };
  calib::DeviceBuffer<float> amax(1);
  calib::DeviceBuffer<int> live(1);
  const bf16* xp = reinterpret_cast<const bf16*>(x.get());
  for (const int n : {1, 20, 37}) {
    CALIB_CUDA(cudaMemcpy(live.get(), &n, sizeof(int), cudaMemcpyHostToDevice));
    set_scalar(amax.get(), 0.0f);
    amax_bf16(xp, rows, cols, live.get(), amax.get(), nullptr);
    EXPECT_EQ(scalar(amax.get()), host_amax(n)) << n << " live rows";
  }
  set_scalar(amax.get(), 0.0f);
  amax_bf16(xp, rows, cols, nullptr, amax.get(), nullptr);
  EXPECT_EQ(scalar(amax.get()), 900.0f);
  set_scalar(amax.get(), 1000.0f);  // the reduction folds into what is there
  amax_bf16(xp, rows, cols, nullptr, amax.get(), nullptr);
  EXPECT_EQ(scalar(amax.get()), 1000.0f);
}

TEST(Fp8Kernels, NormAndSwigluFoldTheirOutputsAmaxWithoutChangingThem) {
  REQUIRE_GPU();
  const int rows = 24, live_n = 19, hidden = 1024, ffn = 1536;
  const auto resid_h = random_bf16(std::size_t(rows) * hidden, 3.0f, 2);
  const auto delta_h = random_bf16(std::size_t(rows) * hidden, 1.0f, 3);
  const auto w_h = random_bf16(hidden, 1.5f, 4);
  auto resid_a = to_device(resid_h), resid_b = to_device(resid_h), delta = to_device(delta_h),
       w = to_device(w_h);
  calib::DeviceBuffer<std::uint16_t> out_a(resid_h.size()), out_b(resid_h.size());
  calib::DeviceBuffer<float> amax(1);
  calib::DeviceBuffer<int> live(1);
  CALIB_CUDA(cudaMemcpy(live.get(), &live_n, sizeof(int), cudaMemcpyHostToDevice));
  auto bp = [](auto& d) { return reinterpret_cast<bf16*>(d.get()); };
  set_scalar(amax.get(), 0.0f);
  add_rmsnorm(bp(resid_a), bp(delta), bp(w), bp(out_a), rows, hidden, 1e-5f, nullptr);
  add_rmsnorm_amax(bp(resid_b), bp(delta), bp(w), bp(out_b), rows, hidden, 1e-5f, live.get(), amax.get(),
                   nullptr);
  const auto oa = to_host(out_a), ob = to_host(out_b);
  EXPECT_EQ(oa, ob) << "the norm's output is the same with the reduction";
  EXPECT_EQ(to_host(resid_a), to_host(resid_b));
  float m = 0;
  for (std::size_t i = 0; i < std::size_t(live_n) * hidden; ++i)
    m = std::max(m, std::fabs(bf16_value(ob[i])));
  EXPECT_EQ(scalar(amax.get()), m);

  const auto gu_h = random_bf16(std::size_t(rows) * 2 * ffn, 4.0f, 5);
  auto gu = to_device(gu_h);
  calib::DeviceBuffer<std::uint16_t> act_a(std::size_t(rows) * ffn), act_b(std::size_t(rows) * ffn);
  calib::swiglu(bp(gu), bp(act_a), rows, ffn, nullptr);
  set_scalar(amax.get(), 0.0f);
  swiglu_amax(bp(gu), bp(act_b), rows, ffn, live.get(), amax.get(), nullptr);
  const auto aa = to_host(act_a), ab = to_host(act_b);
  EXPECT_EQ(aa, ab) << "SwiGLU's output is calib::swiglu's";
  m = 0;
  for (std::size_t i = 0; i < std::size_t(live_n) * ffn; ++i) m = std::max(m, std::fabs(bf16_value(ab[i])));
  EXPECT_EQ(scalar(amax.get()), m);
}

TEST(Fp8Weights, QuantizedAtLoadEqualTheHostsQuantization) {
  REQUIRE_GPU();
  LlamaConfig c;
  c.name = "tiny-fp8";
  c.layers = 2;
  c.hidden = 256;
  c.heads = 4;
  c.kv_heads = 2;
  c.ffn = 512;
  c.vocab = 512;
  c.max_seq = 64;
  const WeightLayout L(c);
  const auto host = L.random_host(9);
  const DeviceWeights bf = DeviceWeights::random(c, 9);
  const DeviceWeights w = DeviceWeights::random(c, 9, WeightFormat::FP8);
  EXPECT_EQ(w.format(), WeightFormat::FP8);
  EXPECT_LT(w.bytes(), bf.bytes());
  const auto q = w.fp8_to_host();
  int quantized = 0;
  for (int l = 0; l < c.layers; ++l)
    for (LayerTensor t : {LayerTensor::Qkv, LayerTensor::O, LayerTensor::GateUp, LayerTensor::Down}) {
      const TensorSlot& s = L.layer(l, t);
      std::vector<float> v(std::size_t(s.elems()));
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = bf16_value(host[std::size_t(s.offset) + i]);
      const Fp8Tensor want = fp8_quantize_tensor(v.data(), v.size());
      const auto& got = q[s.id];
      EXPECT_EQ(got.scale, want.scale) << s.name;
      ASSERT_EQ(got.bits.size(), want.bits.size()) << s.name;
      for (std::size_t i = 0; i < v.size(); ++i)
        ASSERT_TRUE(same_value(got.bits[i], want.bits[i])) << s.name << " " << i;
      EXPECT_THROW(w.at(s), std::logic_error);
      ++quantized;
    }
  EXPECT_EQ(quantized, 4 * c.layers);
  // The embedding, norms and LM head stay bf16, bit for bit.
  for (const TensorSlot* s : {&L.embed(), &L.final_norm(), &L.lm_head(), &L.layer(1, LayerTensor::FfnNorm)}) {
    std::vector<std::uint16_t> got(std::size_t(s->elems()));
    CALIB_CUDA(cudaMemcpy(got.data(), w.at(*s), got.size() * 2, cudaMemcpyDeviceToHost));
    EXPECT_TRUE(std::equal(got.begin(), got.end(), host.begin() + s->offset)) << s->name;
    EXPECT_THROW(w.fp8_at(*s), std::logic_error);
  }
}

namespace {
/// ‖gpu − exact‖₂ / ‖exact‖₂ and the largest |gpu − exact| / max |exact| of Y = xs·ws·X8·W8ᵀ.
std::pair<double, double> fp8_gemm_error(const std::vector<std::uint8_t>& x8, float xs,
                                         const std::vector<std::uint8_t>& w8, float ws,
                                         const std::vector<std::uint16_t>& y, int m, int n, int k) {
  double num = 0, den = 0, worst = 0, ymax = 0;
  double value[256];
  for (int b = 0; b < 256; ++b) value[b] = fp8_e4m3_value(std::uint8_t(b));
  std::vector<double> exact(std::size_t(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      const std::uint8_t* xr = x8.data() + std::size_t(i) * k;
      const std::uint8_t* wr = w8.data() + std::size_t(j) * k;
      for (int t = 0; t < k; ++t) acc += value[xr[t]] * value[wr[t]];
      exact[std::size_t(i) * n + j] = acc * double(xs) * double(ws);
      ymax = std::max(ymax, std::abs(exact[std::size_t(i) * n + j]));
    }
  for (std::size_t e = 0; e < exact.size(); ++e) {
    const double d = double(bf16_value(y[e])) - exact[e];
    num += d * d;
    den += exact[e] * exact[e];
    worst = std::max(worst, std::abs(d));
  }
  return {std::sqrt(num / den), worst / ymax};
}
}  // namespace

TEST(LtGemmFp8, MatchesTheExactProductOfItsE4M3Inputs) {
  REQUIRE_GPU();
  LtGemm g;
  // Odd and even row counts (decode batches, a prefill chunk), the engine's column and depth shapes.
  for (auto [m, n, k] : {std::tuple{1, 256, 512}, std::tuple{3, 1024, 256}, std::tuple{17, 768, 4096},
                         std::tuple{100, 512, 1024}, std::tuple{257, 4096, 128}}) {
    const auto xh = random_bf16(std::size_t(m) * k, 2.5f, 10 + std::uint32_t(m));
    const auto wh = random_bf16(std::size_t(n) * k, 0.05f, 20 + std::uint32_t(n));
    auto x = to_device(xh), w = to_device(wh);
    calib::DeviceBuffer<fp8> x8(xh.size()), w8(wh.size());
    calib::DeviceBuffer<float> amax(2), scale(2 * kFp8ScaleStride);
    calib::DeviceBuffer<std::uint16_t> y(std::size_t(m) * n);
    CALIB_CUDA(cudaMemset(amax.get(), 0, amax.bytes()));
    CALIB_CUDA(cudaMemset(y.get(), 0xFF, y.bytes()));  // NaN: every output must be written
    const bf16* xp = reinterpret_cast<const bf16*>(x.get());
    const bf16* wp = reinterpret_cast<const bf16*>(w.get());
    amax_bf16(xp, m, k, nullptr, amax.get(), nullptr);
    amax_bf16(wp, n, k, nullptr, amax.get() + 1, nullptr);
    quantize_fp8(xp, std::int64_t(xh.size()), amax.get(), x8.get(), scale.get(), nullptr);
    quantize_fp8(wp, std::int64_t(wh.size()), amax.get() + 1, w8.get(), scale.get() + kFp8ScaleStride,
                 nullptr);
    g.run_fp8(x8.get(), scale.get(), w8.get(), scale.get() + kFp8ScaleStride,
              reinterpret_cast<bf16*>(y.get()), m, n, k, nullptr);
    CALIB_CUDA(cudaDeviceSynchronize());
    std::vector<std::uint8_t> x8h(xh.size()), w8h(wh.size());
    CALIB_CUDA(cudaMemcpy(x8h.data(), x8.get(), x8h.size(), cudaMemcpyDeviceToHost));
    CALIB_CUDA(cudaMemcpy(w8h.data(), w8.get(), w8h.size(), cudaMemcpyDeviceToHost));
    const auto sch = to_host(scale);
    const float sc[2] = {sch[0], sch[kFp8ScaleStride]};
    // fp32 accumulation of exact E4M3 products and one bf16 rounding of the output (≤ 2⁻⁹
    // relative): a few 10⁻³ at most.
    const auto [rel, worst] = fp8_gemm_error(x8h, sc[0], w8h, sc[1], to_host(y), m, n, k);
    EXPECT_LT(rel, 3e-3) << m << "x" << n << "x" << k;
    EXPECT_LT(worst, 8e-3) << m << "x" << n << "x" << k;
    // The plan key holds the input type: the same shape in bf16 is a second plan.
    const std::size_t before = g.plans();
    g.prepare(m, n, k, false, GemmInput::BF16);
    EXPECT_EQ(g.plans(), before + 1);
    g.prepare(m, n, k, false, GemmInput::FP8);
    EXPECT_EQ(g.plans(), before + 1);
    // Autotuning the fp8 shape keeps a plan that computes the same product.
    const auto t = g.tune_fp8(x8.get(), scale.get(), w8.get(), scale.get() + kFp8ScaleStride,
                              reinterpret_cast<bf16*>(y.get()), m, n, k, nullptr);
    EXPECT_GT(t.first, 0.0);
    EXPECT_LE(t.second, t.first);
    CALIB_CUDA(cudaMemset(y.get(), 0xFF, y.bytes()));
    g.run_fp8(x8.get(), scale.get(), w8.get(), scale.get() + kFp8ScaleStride,
              reinterpret_cast<bf16*>(y.get()), m, n, k, nullptr);
    CALIB_CUDA(cudaDeviceSynchronize());
    EXPECT_LT(fp8_gemm_error(x8h, sc[0], w8h, sc[1], to_host(y), m, n, k).first, 3e-3) << "tuned";
  }
  EXPECT_GT(g.warm_buckets(1024, 256, false, 512, GemmInput::FP8), 0);
  // Scale pointers that are not 16-byte aligned are refused before cuBLASLt sees them.
  calib::DeviceBuffer<fp8> a(16 * 256), b(16 * 256);
  calib::DeviceBuffer<float> s(8);
  calib::DeviceBuffer<std::uint16_t> out(16 * 16);
  EXPECT_THROW(g.run_fp8(a.get(), s.get(), b.get(), s.get() + 1, reinterpret_cast<bf16*>(out.get()), 16, 16,
                         256, nullptr),
               calib::CudaError);
}

TEST(LtGemmFp8, QuantizeAndGemmReplayFromAGraphWithNewInputs) {
  REQUIRE_GPU();
  const int m = 8, n = 512, k = 1024;
  LtGemm g;
  calib::Stream stream;
  calib::DeviceBuffer<std::uint16_t> x(std::size_t(m) * k), y(std::size_t(m) * n);
  const auto wh = random_bf16(std::size_t(n) * k, 0.05f, 30);
  auto w = to_device(wh);
  calib::DeviceBuffer<fp8> x8(x.size()), w8(wh.size());
  calib::DeviceBuffer<float> amax(2), scale(2 * kFp8ScaleStride);
  CALIB_CUDA(cudaMemset(amax.get(), 0, amax.bytes()));
  const bf16* wp = reinterpret_cast<const bf16*>(w.get());
  amax_bf16(wp, n, k, nullptr, amax.get() + 1, nullptr);
  quantize_fp8(wp, std::int64_t(wh.size()), amax.get() + 1, w8.get(), scale.get() + kFp8ScaleStride, nullptr);
  CALIB_CUDA(cudaDeviceSynchronize());
  const bf16* xp = reinterpret_cast<const bf16*>(x.get());
  auto step = [&](cudaStream_t s) {
    CALIB_CUDA(cudaMemsetAsync(amax.get(), 0, sizeof(float), s));
    amax_bf16(xp, m, k, nullptr, amax.get(), s);
    quantize_fp8(xp, std::int64_t(x.size()), amax.get(), x8.get(), scale.get(), s);
    g.run_fp8(x8.get(), scale.get(), w8.get(), scale.get() + kFp8ScaleStride,
              reinterpret_cast<bf16*>(y.get()), m, n, k, s);
  };
  g.prepare(m, n, k, false, GemmInput::FP8);
  cudaGraph_t graph = nullptr;
  CALIB_CUDA(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeRelaxed));
  step(stream.get());
  CALIB_CUDA(cudaStreamEndCapture(stream.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  CALIB_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  const auto w8h = [&] {
    std::vector<std::uint8_t> h(wh.size());
    CALIB_CUDA(cudaMemcpy(h.data(), w8.get(), h.size(), cudaMemcpyDeviceToHost));
    return h;
  }();
  // Two input sets of very different magnitude: a stale scale would be off by 100×.
  for (const float spread : {0.02f, 2.0f}) {
    const auto xh = random_bf16(x.size(), spread, 40 + std::uint32_t(spread * 100));
    CALIB_CUDA(cudaMemcpy(x.get(), xh.data(), x.bytes(), cudaMemcpyHostToDevice));
    CALIB_CUDA(cudaMemset(y.get(), 0xFF, y.bytes()));
    CALIB_CUDA(cudaGraphLaunch(exec, stream.get()));
    CALIB_CUDA(cudaStreamSynchronize(stream.get()));
    std::vector<std::uint8_t> x8h(x.size());
    CALIB_CUDA(cudaMemcpy(x8h.data(), x8.get(), x8h.size(), cudaMemcpyDeviceToHost));
    const auto sch = to_host(scale);
    const float sc[2] = {sch[0], sch[kFp8ScaleStride]};
    float amax_h = 0;
    for (auto b : xh) amax_h = std::max(amax_h, std::fabs(bf16_value(b)));
    EXPECT_EQ(sc[0], fp8_scale_for_amax(amax_h)) << spread;
    EXPECT_LT(fp8_gemm_error(x8h, sc[0], w8h, sc[1], to_host(y), m, n, k).first, 3e-3) << spread;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

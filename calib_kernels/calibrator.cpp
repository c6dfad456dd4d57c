#include "calib_kernels/calibrator.hpp"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <iostream>
#include <numeric>
#include <sstream>
#include <tuple>

#include "calib_kernels/checks.hpp"
#include "calib_kernels/gemm_layouts.hpp"
#include "calib_kernels/kernels.hpp"
#include "calib_kernels/power_probe.hpp"
#include "calib_kernels/rng.hpp"
#include "calib_kernels/timing.hpp"

namespace infraplan::calib {
namespace {

using json = nlohmann::ordered_json;

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

std::string fmt(const char* f, double a) {
  char b[64];
  std::snprintf(b, sizeof b, f, a);
  return b;
}

/// Concatenates anything streamable (avoids GCC 12's false -Wrestrict on literal + std::string).
template <class... A>
std::string cat(const A&... a) {
  std::ostringstream o;
  (o << ... << a);
  return o.str();
}

std::string shape3(std::int64_t a, std::int64_t b, std::int64_t c) { return cat(a, "x", b, "x", c); }

std::vector<std::int64_t> pow2(std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> v;
  for (std::int64_t x = lo; x <= hi; x *= 2) v.push_back(x);
  return v;
}

double causal_flops(double batch, double heads, double s, double d, bool causal) {
  // QKᵀ and PV: 4·S·S·d per head, half of it under a causal mask (diagonal included: S(S+1)/2).
  double pairs = causal ? s * (s + 1) / 2 : s * s;
  return 4.0 * batch * heads * pairs * d;
}

}  // namespace

Calibrator::Calibrator(CalibrateOptions opt) : opt_(std::move(opt)) {
  int dev = 0;
  CALIB_CUDA(cudaGetDevice(&dev));
  CALIB_CUDA(cudaGetDeviceProperties(&prop_, dev));
  lt_ = std::make_unique<LtHandle>();
  t0_ = std::chrono::steady_clock::now();
}

Calibrator::~Calibrator() = default;

void Calibrator::stage(const std::string& name) {
  auto now = std::chrono::steady_clock::now();
  ++stage_no_;
  std::fprintf(stderr, "[calibrate %5.1fs] stage %d/%d: %s\n",
               std::chrono::duration<double>(now - t0_).count(), stage_no_, stage_count_, name.c_str());
  std::fflush(stderr);
  stage_t0_ = now;
}

void Calibrator::add(KernelResult r) {
  if (opt_.verbose)
    std::fprintf(stderr, "  %-28s %-22s %10.2f us %9.1f %s (ceiling %.1f)\n", r.name.c_str(), r.shape.c_str(),
                 r.seconds * 1e6, r.achieved, r.unit.c_str(), r.ceiling);
  results_.push_back(std::move(r));
}

void Calibrator::device_info() {
  int driver = 0, runtime = 0, cublas_ver = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cublas_ver = int(cublasLtGetVersion());
  int clock_khz = 0, mem_clock_khz = 0, bus = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0);
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  profile_["schema"] = "infraplan-profile/1";
  profile_["gpu"] = opt_.gpu_name;
  profile_["source"] = "measured";
  profile_["date"] = date;
  profile_["command"] = opt_.command;
  profile_["quick"] = opt_.quick;
  profile_["seed"] = opt_.seed;
  profile_["device"] = {
      {"name", prop_.name},
      {"compute_capability", cat(prop_.major, ".", prop_.minor)},
      {"sms", prop_.multiProcessorCount},
      {"memory_bytes", double(prop_.totalGlobalMem)},
      {"l2_bytes", prop_.l2CacheSize},
      {"smem_per_sm_bytes", double(prop_.sharedMemPerMultiprocessor)},
      {"sm_clock_mhz", clock_khz / 1000},
      {"memory_clock_mhz", mem_clock_khz / 1000},
      {"memory_bus_bits", bus},
      {"driver_version", cat(driver / 1000, ".", driver % 1000 / 10)},
      {"cuda_runtime_version", cat(runtime / 1000, ".", runtime % 1000 / 10)},
      {"cublaslt_version", cublas_ver},
  };
}

void Calibrator::bandwidth() {
  cudaStream_t s = stream_.get();
  double l2 = prop_.l2CacheSize;
  // Ceilings: copy and read of 2 GiB.
  std::size_t big = std::size_t(2) << 30;
  DeviceBuffer<float4> src(big / 16), dst(big / 16);
  DeviceBuffer<float> sink(4096);
  fill_random(src.get(), big / 4, Elem::F32, opt_.seed, 1.f, s);
  TimingOptions topt;
  topt.budget_ms = 40;
  // The copy ceiling is the best of the copy kernel at several grid sizes and cudaMemcpy.
  double tc = 1e30;
  int best_per_sm = 8;
  for (int per_sm : {4, 8, 16, 32}) {
    double t =
        time_median_seconds([&](int) { copy_kernel(src.get(), dst.get(), big / 16, s, per_sm); }, s, topt);
    add({cat("copy_kernel_", per_sm, "_blocks_per_sm"), "bandwidth", "2 GiB", t, 2.0 * big / t / 1e9, "GB/s",
         0, ""});
    if (t < tc) {
      tc = t;
      best_per_sm = per_sm;
    }
  }
  double tm = time_median_seconds(
      [&](int) { CALIB_CUDA(cudaMemcpyAsync(dst.get(), src.get(), big, cudaMemcpyDeviceToDevice, s)); }, s,
      topt);
  add({"cudaMemcpy_d2d", "bandwidth", "2 GiB", tm, 2.0 * big / tm / 1e9, "GB/s", 0, ""});
  copy_GBps_ = 2.0 * big / std::min(tc, tm) / 1e9;
  double tr = time_median_seconds([&](int) { read_kernel(src.get(), big / 16, sink.get(), s); }, s, topt);
  read_GBps_ = double(big) / tr / 1e9;
  add({"copy", "bandwidth", "2 GiB", std::min(tc, tm), copy_GBps_, "GB/s", copy_GBps_, "copy (read+write)"});
  add({"read_stream", "bandwidth", "2 GiB", tr, read_GBps_, "GB/s", read_GBps_, "read"});

  // Memory-bound table: copy of `b` bytes per side (table bytes = read + written), rotated past L2.
  json tb = json::array(), tt = json::array();
  std::int64_t hi = opt_.quick ? (std::int64_t(1) << 30) : (std::int64_t(1) << 31);
  for (std::int64_t b = 4096; b <= hi; b *= 2) {
    std::size_t n4 = std::size_t(b) / 16;
    int copies = rotation_copies(2.0 * b, l2, 1024);
    double t = time_median_seconds(
        [&](int i) {
          std::size_t off = std::size_t(i % copies) * n4;
          copy_kernel(src.get() + off, dst.get() + off, n4, s, best_per_sm);
        },
        s);
    tb.push_back(2 * b);
    tt.push_back(t);
  }
  profile_["tables"]["memory_bound"] = {{"kernel", "copy"}, {"bytes", tb}, {"seconds", tt}};
  // Held out: odd sizes between the grid points.
  Rng rng{opt_.seed ^ 0x5eed};
  json ho = json::array();
  int nh = opt_.quick ? 6 : 24;
  for (int i = 0; i < nh; ++i) {
    std::int64_t n4 = rng.log_int(600, double(hi) / 16) | 1;
    int copies = rotation_copies(32.0 * n4, l2, 1024);
    double t = time_median_seconds(
        [&](int it) {
          std::size_t off = std::size_t(it % copies) * std::size_t(n4);
          copy_kernel(src.get() + off, dst.get() + off, std::size_t(n4), s, best_per_sm);
        },
        s);
    ho.push_back({{"kernel", "copy"}, {"bytes", 32 * n4}, {"seconds", t}});
  }
  profile_["holdout"]["memory_bound"] = ho;

  // Pinned host ↔ device.
  std::size_t hb = std::size_t(256) << 20;
  PinnedBuffer<unsigned char> host(hb);
  std::fill(host.get(), host.get() + hb, 1);
  TimingOptions hopt;
  hopt.min_iters = 3;
  hopt.budget_ms = 100;
  double th2d = time_median_seconds(
      [&](int) { CALIB_CUDA(cudaMemcpyAsync(dst.get(), host.get(), hb, cudaMemcpyHostToDevice, s)); }, s,
      hopt);
  double td2h = time_median_seconds(
      [&](int) { CALIB_CUDA(cudaMemcpyAsync(host.get(), dst.get(), hb, cudaMemcpyDeviceToHost, s)); }, s,
      hopt);
  add({"h2d_pinned", "bandwidth", "256 MiB", th2d, hb / th2d / 1e9, "GB/s", 0, "PCIe"});
  add({"d2h_pinned", "bandwidth", "256 MiB", td2h, hb / td2h / 1e9, "GB/s", 0, "PCIe"});

  launch_overheads();

  profile_["ceilings"]["copy_GBps"] = copy_GBps_;
  profile_["ceilings"]["read_GBps"] = read_GBps_;
  profile_["ceilings"]["h2d_pinned_GBps"] = hb / th2d / 1e9;
  profile_["ceilings"]["d2h_pinned_GBps"] = hb / td2h / 1e9;
}

void Calibrator::launch_overheads() {
  cudaStream_t s = stream_.get();
  TimingOptions hopt;
  hopt.min_iters = 3;
  hopt.budget_ms = 100;
  // Launch overhead: back-to-back launches (host clock), one launch + sync, CUDA-graph replay.
  const int n = 2000;
  for (int i = 0; i < 100; ++i) empty_kernel(s);
  CALIB_CUDA(cudaStreamSynchronize(s));
  auto h0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) empty_kernel(s);
  CALIB_CUDA(cudaStreamSynchronize(s));
  double launch = std::chrono::duration<double>(std::chrono::steady_clock::now() - h0).count() / n;
  std::vector<double> rt;
  for (int i = 0; i < 200; ++i) {
    auto a = std::chrono::steady_clock::now();
    empty_kernel(s);
    CALIB_CUDA(cudaStreamSynchronize(s));
    rt.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::nth_element(rt.begin(), rt.begin() + rt.size() / 2, rt.end());
  double roundtrip = rt[rt.size() / 2];
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  const int gk = 1000;
  CALIB_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < gk; ++i) empty_kernel(s);
  CALIB_CUDA(cudaStreamEndCapture(s, &graph));
  CALIB_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  double tg = time_median_seconds([&](int) { CALIB_CUDA(cudaGraphLaunch(exec, s)); }, s, hopt) / gk;
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  add({"launch_back_to_back", "bandwidth", "empty kernel", launch, 0, "us", 0, ""});
  add({"launch_and_sync", "bandwidth", "empty kernel", roundtrip, 0, "us", 0, ""});
  add({"graph_replay_per_kernel", "bandwidth", "1000-kernel graph", tg, 0, "us", 0, ""});


  // The gap between dependent kernels on the GPU: a chain of kernels that each occupy every SM
  // for a fixed 20 µs (longer than a launch, so the host stays ahead), issued eagerly and replayed
  // from a graph. The difference per kernel is what an eager step pays beyond a graph replay.
  const int chain = 400, sms = prop_.multiProcessorCount;
  const unsigned wait_ns = 20000;
  for (int i = 0; i < 50; ++i) wait_kernel(wait_ns, sms, s);
  CALIB_CUDA(cudaStreamSynchronize(s));
  const double t_eager =
      time_median_seconds([&](int) { for (int i = 0; i < chain; ++i) wait_kernel(wait_ns, sms, s); }, s, hopt);
  CALIB_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < chain; ++i) wait_kernel(wait_ns, sms, s);
  CALIB_CUDA(cudaStreamEndCapture(s, &graph));
  CALIB_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  const double t_graph = time_median_seconds([&](int) { CALIB_CUDA(cudaGraphLaunch(exec, s)); }, s, hopt);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  const double eager_gap = std::max(0.0, (t_eager - t_graph) / chain);
  add({"eager_kernel_gap", "bandwidth", "400 dependent 20 µs kernels, eager vs graph", eager_gap, 0, "us", 0, ""});
  profile_["ceilings"]["launch_us"] = launch * 1e6;
  profile_["ceilings"]["launch_sync_us"] = roundtrip * 1e6;
  profile_["ceilings"]["graph_kernel_us"] = tg * 1e6;
  profile_["ceilings"]["eager_kernel_gap_us"] = eager_gap * 1e6;
  profile_["ceilings"]["graph_chain_kernel_us"] = (t_graph / chain - wait_ns * 1e-9) * 1e6;
}

void Calibrator::exercises() {
  cudaStream_t s = stream_.get();
  // Reduce ×3 on 1 GiB of floats (the atomic version on 64 MiB, rotated).
  std::size_t n = std::size_t(1) << 28;
  DeviceBuffer<float> x(n), out(1);
  fill_random(x.get(), n, Elem::F32, opt_.seed + 1, 1.f, s);
  std::size_t na = std::size_t(1) << 24;
  TimingOptions few;
  few.min_iters = 3;
  few.budget_ms = 50;
  double ta =
      time_median_seconds([&](int i) { reduce_atomic(x.get() + (i % 4) * na, na, out.get(), s); }, s, few);
  double tt = time_median_seconds([&](int) { reduce_smem_tree(x.get(), n, out.get(), s); }, s, few);
  double tw = time_median_seconds([&](int) { reduce_warp_shuffle(x.get(), n, out.get(), s); }, s, few);
  for (auto [nm, t, cnt] : {std::tuple{"reduce_atomic", ta, na}, std::tuple{"reduce_smem_tree", tt, n},
                            std::tuple{"reduce_warp_shuffle", tw, n}}) {
    std::string sh = cat(cnt >> 20, "M fp32");
    add({nm, "reduce", sh, t, cnt * 4 / t / 1e9, "GB/s", copy_GBps_, "copy"});
    add({cat(nm, "_vs_read"), "reduce", sh, t, cnt * 4 / t / 1e9, "GB/s", read_GBps_, "read stream"});
  }

  // Transpose 8192² fp32 (256 MiB each way).
  int R = 8192, C = 8192;
  DeviceBuffer<float> tout(std::size_t(R) * C);
  for (bool pad : {false, true}) {
    double t = time_median_seconds([&](int) { transpose32(x.get(), tout.get(), R, C, pad, s); }, s, few);
    add({pad ? "transpose_padded" : "transpose", "transpose", "8192x8192 fp32", t, 8.0 * R * C / t / 1e9,
         "GB/s", copy_GBps_, "copy"});
  }
  // Softmax 16384 × 4096 fp32.
  int rows = 16384, cols = 4096;
  for (bool online : {false, true}) {
    double t = time_median_seconds(
        [&](int) {
          if (online)
            softmax_online(x.get(), tout.get(), rows, cols, s);
          else
            softmax_naive(x.get(), tout.get(), rows, cols, s);
        },
        s, few);
    add({online ? "softmax_online" : "softmax_naive", "softmax", "16384x4096 fp32", t,
         8.0 * rows * cols / t / 1e9, "GB/s", copy_GBps_, "copy (1 read + 1 write)"});
  }
}

void Calibrator::memory_kernels() {
  // RMSNorm, SwiGLU, RoPE (bf16): bytes = one read + one write of the activations.
  cudaStream_t s = stream_.get();
  double l2 = prop_.l2CacheSize;
  std::size_t n = std::size_t(1) << 28;  // 512 MiB of bf16 each way, as large as the largest case
  DeviceBuffer<bf16> x(n), y(n);
  fill_random(x.get(), n, Elem::BF16, opt_.seed + 1, 1.f, s);
  bf16* xb = x.get();
  bf16* yb = y.get();
  std::vector<std::pair<int, int>> norm_shapes = {{16384, 8192}, {4096, 4096}, {1000, 5120}, {65536, 2048}};
  if (opt_.quick) norm_shapes.resize(1);
  DeviceBuffer<bf16> w(16384);
  fill_random(w.get(), 16384, Elem::BF16, opt_.seed + 2, 1.f, s);
  DeviceBuffer<int> pos(65536);
  std::vector<int> hp(65536);
  std::iota(hp.begin(), hp.end(), 0);
  CALIB_CUDA(cudaMemcpy(pos.get(), hp.data(), hp.size() * sizeof(int), cudaMemcpyHostToDevice));
  // 20 ms of warm-up each: the first of three passes over the same RMSNorm launch read 76-80% of
  // copy where the next two read 83-87% (--only rmsnorm), the GPU still settling after other work.
  TimingOptions settled;
  settled.warmup_ms = 20;
  for (auto [r, h] : norm_shapes) {
    double bytes = 4.0 * r * h;
    int copies = rotation_copies(bytes, l2, 16);
    std::size_t stride = std::size_t(r) * h;
    double t = time_median_seconds(
        [&](int i) {
          rmsnorm(xb + (i % copies) * stride, w.get(), yb + (i % copies) * stride, r, h, 1e-6f, s);
        },
        s, settled);
    add({"rmsnorm", "memory", cat(r, "x", h), t, bytes / t / 1e9, "GB/s", copy_GBps_, "copy"});
  }
  for (auto [r, f] : opt_.quick
                         ? std::vector<std::pair<int, int>>{{8192, 14336}}
                         : std::vector<std::pair<int, int>>{{8192, 14336}, {2048, 11008}, {333, 4096}}) {
    double bytes = 6.0 * r * f;  // read gate+up, write out
    int copies = rotation_copies(bytes, l2, 16);
    std::size_t stride = std::size_t(r) * 2 * f;
    double t = time_median_seconds(
        [&](int i) { swiglu(xb + (i % copies) * stride, yb + (i % copies) * stride, r, f, s); }, s, settled);
    add({"swiglu", "memory", cat(r, "x", f), t, bytes / t / 1e9, "GB/s", copy_GBps_, "copy"});
  }
  for (auto [tok, heads] : opt_.quick
                               ? std::vector<std::pair<int, int>>{{16384, 32}}
                               : std::vector<std::pair<int, int>>{{16384, 32}, {4096, 40}, {65536, 8}}) {
    double bytes = 4.0 * tok * heads * 128;
    int copies = rotation_copies(bytes, l2, 16);
    std::size_t stride = std::size_t(tok) * heads * 128;
    double t = time_median_seconds(
        [&](int i) { rope(xb + (i % copies) * stride, pos.get(), tok, heads, 128, 10000.f, s); }, s, settled);
    add({"rope", "memory", cat(tok, "x", heads, "x128"), t, bytes / t / 1e9, "GB/s", copy_GBps_, "copy"});
  }
}

void Calibrator::rmsnorm_sweep() {
  // Every configuration on the wide-row shapes, in three interleaved passes (the run-to-run spread
  // of one configuration is the yardstick for the differences between them); each output is
  // compared with the default launch's.
  bandwidth();
  cudaStream_t s = stream_.get();
  double l2 = prop_.l2CacheSize;
  std::size_t n = std::size_t(1) << 28;
  DeviceBuffer<bf16> x(n), y(n), ref(std::size_t(1) << 24);
  fill_random(x.get(), n, Elem::BF16, opt_.seed + 1, 1.f, s);
  DeviceBuffer<bf16> w(16384);
  fill_random(w.get(), 16384, Elem::BF16, opt_.seed + 2, 1.f, s);
  const std::vector<std::pair<int, int>> shapes = {{16384, 8192}, {4096, 4096},  {8192, 5120},
                                                   {16384, 4096}, {4096, 16384}, {32768, 8192}};
  std::printf("copy %.0f GB/s\n%-14s %-40s %s\n", copy_GBps_, "shape", "configuration",
              "pass 1 / 2 / 3: % of copy");
  for (auto [r, h] : shapes) {
    double bytes = 4.0 * r * h;
    int copies = rotation_copies(bytes, l2, 16);
    std::size_t stride = std::size_t(r) * h;
    int check_rows = int(std::min<std::size_t>(r, ref.size() / std::size_t(h)));
    rmsnorm(x.get(), w.get(), ref.get(), check_rows, h, 1e-6f, s);
    std::vector<std::vector<double>> frac(rmsnorm_config_count() + 1);
    for (int pass = 0; pass < 3; ++pass)
      for (int c = -1; c < rmsnorm_config_count(); ++c) {
        if (c >= 0 && !rmsnorm_config(c, x.get(), w.get(), y.get(), 1, h, 1e-6f, s)) continue;
        auto run = [&](int i) {
          bf16* xi = x.get() + (i % copies) * stride;
          bf16* yi = y.get() + (i % copies) * stride;
          if (c < 0)
            rmsnorm(xi, w.get(), yi, r, h, 1e-6f, s);
          else
            rmsnorm_config(c, xi, w.get(), yi, r, h, 1e-6f, s);
        };
        TimingOptions settled;
        settled.warmup_ms = 20;
        double t = time_median_seconds(run, s, settled);
        frac[c + 1].push_back(bytes / t / 1e9 / copy_GBps_ * 100);
      }
    for (int c = -1; c < rmsnorm_config_count(); ++c) {
      if (frac[c + 1].empty()) continue;
      if (c >= 0) {  // same output as the default launch on the first rows
        rmsnorm_config(c, x.get(), w.get(), y.get(), check_rows, h, 1e-6f, s);
        std::size_t e = std::size_t(check_rows) * h;
        std::vector<bf16> a(e), b(e);
        CALIB_CUDA(cudaMemcpyAsync(a.data(), y.get(), e * sizeof(bf16), cudaMemcpyDeviceToHost, s));
        CALIB_CUDA(cudaMemcpyAsync(b.data(), ref.get(), e * sizeof(bf16), cudaMemcpyDeviceToHost, s));
        CALIB_CUDA(cudaStreamSynchronize(s));
        double worst = 0;
        for (std::size_t i = 0; i < e; ++i) {
          double u = __bfloat162float(a[i]), v = __bfloat162float(b[i]);
          worst = std::max(worst, std::abs(u - v) / std::max(std::abs(v), 1e-3));
        }
        if (!(worst < 2e-2))
          std::printf("  %s: differs from the default by %.3g\n", rmsnorm_config_name(c), worst);
      }
      std::printf("%-14s %-40s", cat(r, "x", h).c_str(), c < 0 ? "default" : rmsnorm_config_name(c));
      for (double f : frac[c + 1]) std::printf(" %5.1f", f);
      std::printf("\n");
    }
  }
}

namespace {

/// Copy i of the square bf16 operands (inputs rotated past L2, one output).
struct SquareOperands {
  const bf16* A;
  const bf16* B;
  bf16* C;
  std::size_t elements;  ///< n²
  int copies;
  const bf16* a(int i) const { return A + std::size_t(i % copies) * elements; }
  const bf16* b(int i) const { return B + std::size_t(i % copies) * elements; }
};

/// The own-GEMM comparisons' shapes: n³ for n = 1024 … 8192 (1024 and 4096 with --quick), bf16
/// random operands; body(n, operands) for each n.
void square_gemms(bool quick, std::uint64_t seed, double l2, cudaStream_t s,
                  const std::function<void(int, const SquareOperands&)>& body) {
  std::vector<int> sizes = quick ? std::vector<int>{1024, 4096} : std::vector<int>{1024, 2048, 4096, 8192};
  std::size_t maxe = std::size_t(8192) * 8192;
  DeviceBuffer<bf16> A(maxe * 2), B(maxe * 2), C(maxe);
  fill_random(A.get(), A.size(), Elem::BF16, seed + 3, 1.f, s);
  fill_random(B.get(), B.size(), Elem::BF16, seed + 4, 1.f, s);
  for (int n : sizes) {
    std::size_t e = std::size_t(n) * n;
    int copies = std::min<int>(rotation_copies(6.0 * e, l2, 64), int(maxe * 2 / e));
    body(n, SquareOperands{A.get(), B.get(), C.get(), e, copies});
  }
}

}  // namespace

void Calibrator::own_gemm() {
  cudaStream_t s = stream_.get();
  square_gemms(opt_.quick, opt_.seed, prop_.l2CacheSize, s, [&](int n, const SquareOperands& o) {
    double flops = 2.0 * n * n * n;
    LtPlan plan(*lt_, GemmDtype::BF16, n, n, n);
    TimingOptions topt;
    topt.budget_ms = 30;
    double tc = time_median_seconds([&](int i) { plan.run(o.a(i), o.b(i), o.C, s); }, s, topt);
    double tm = time_median_seconds([&](int i) { gemm_mma(o.a(i), o.b(i), o.C, n, n, n, s); }, s, topt);
    std::string sh = shape3(n, n, n) + " bf16";
    add({"gemm_cublaslt", "gemm", sh, tc, flops / tc / 1e12, "TFLOP/s", flops / tc / 1e12,
         "cuBLASLt same shape"});
    double tw = time_median_seconds([&](int i) { gemm_wgmma(o.a(i), o.b(i), o.C, n, n, n, s); }, s, topt);
    add({"gemm_mma", "gemm", sh, tm, flops / tm / 1e12, "TFLOP/s", flops / tc / 1e12, "cuBLASLt same shape"});
    add({"gemm_wgmma", "gemm", sh, tw, flops / tw / 1e12, "TFLOP/s", flops / tc / 1e12,
         "cuBLASLt same shape"});
    if (n <= 4096) {
      TimingOptions few = topt;
      few.min_iters = 3;
      double tt = time_median_seconds([&](int i) { gemm_tiled(o.a(i), o.b(i), o.C, n, n, n, s); }, s, few);
      add({"gemm_tiled", "gemm", sh, tt, flops / tt / 1e12, "TFLOP/s", flops / tc / 1e12,
           "cuBLASLt same shape"});
    }
  });
}

void Calibrator::run_gemm() {
  stage_count_ = 2;
  stage("own GEMMs vs cuBLASLt");
  own_gemm();
  stage("gemm_wgmma tile configurations");
  cudaStream_t s = stream_.get();
  square_gemms(opt_.quick, opt_.seed, prop_.l2CacheSize, s, [&](int n, const SquareOperands& o) {
    double flops = 2.0 * n * n * n;
    TimingOptions topt;
    topt.budget_ms = 30;
    // cuBLASLt again, right before the configurations: late in a long series of large GEMMs the
    // same launch timed up to 10% slower than in the table (the clock falls under sustained load),
    // so the table's reference would make these fractions unfair.
    LtPlan plan(*lt_, GemmDtype::BF16, n, n, n);
    double tc = time_median_seconds([&](int i) { plan.run(o.a(i), o.b(i), o.C, s); }, s, topt);
    for (int cfg = 0; cfg < gemm_wgmma_config_count(); ++cfg) {
      double t = time_median_seconds([&](int i) { gemm_wgmma_config(cfg, o.a(i), o.b(i), o.C, n, n, n, s); },
                                     s, topt);
      add({std::string("gemm_wgmma ") + gemm_wgmma_config_name(cfg), "gemm", shape3(n, n, n) + " bf16", t,
           flops / t / 1e12, "TFLOP/s", flops / tc / 1e12, "cuBLASLt same shape, timed alongside"});
    }
  });
}

void Calibrator::attention_prefill_tables() {
  cudaStream_t s = stream_.get();
  const int heads = 32, kvh = 8;
  std::vector<std::int64_t> seqs = opt_.quick ? pow2(256, 8192) : pow2(128, 32768);
  std::vector<std::int64_t> batches =
      opt_.quick ? std::vector<std::int64_t>{1, 8} : std::vector<std::int64_t>{1, 4, 16, 64};
  const std::int64_t max_tokens = 65536;
  std::size_t qe = std::size_t(max_tokens) * heads * 128, ke = std::size_t(max_tokens) * kvh * 128;
  DeviceBuffer<bf16> q(qe), k(ke), v(ke), o(qe);
  fill_random(q.get(), qe, Elem::BF16, opt_.seed + 5, 1.f, s);
  fill_random(k.get(), ke, Elem::BF16, opt_.seed + 6, 1.f, s);
  fill_random(v.get(), ke, Elem::BF16, opt_.seed + 7, 1.f, s);
  DeviceBuffer<int> cu(4097);
  auto run = [&](int d, const std::vector<int>& lens) {
    std::vector<int> hc = {0};
    for (int l : lens) hc.push_back(hc.back() + l);
    CALIB_CUDA(cudaMemcpy(cu.get(), hc.data(), hc.size() * sizeof(int), cudaMemcpyHostToDevice));
    PrefillArgs a;
    a.q = q.get();
    a.k = k.get();
    a.v = v.get();
    a.o = o.get();
    a.cu_seqlens = cu.get();
    a.num_seqs = int(lens.size());
    a.max_seqlen = *std::max_element(lens.begin(), lens.end());
    a.heads = heads;
    a.kv_heads = kvh;
    a.head_dim = d;
    a.causal = true;
    TimingOptions topt;
    topt.min_iters = 3;
    topt.budget_ms = 30;
    return time_median_seconds([&](int) { attention_prefill(a, s); }, s, topt);
  };
  json tables = json::array();
  for (int d : {64, 128}) {
    json secs = json::array();
    for (std::int64_t S : seqs) {
      json row = json::array();
      for (std::int64_t b : batches) {
        if (S * b > max_tokens) {
          row.push_back(nullptr);
          continue;
        }
        double t = run(d, std::vector<int>(std::size_t(b), int(S)));
        row.push_back(t);
        if ((S == 8192 && b == 4 && d == 128) || (S == 8192 && b == 8 && d == 128) ||
            (S == 4096 && b == 16)) {
          double f = causal_flops(double(b), heads, double(S), d, true);
          add({"attention_prefill_own", "attention", cat("b", b, " S", S, " h32/8 d", d), t, f / t / 1e12,
               "TFLOP/s", 300, "target"});
        }
      }
      secs.push_back(row);
    }
    tables.push_back({{"kernel", "own_fa2"},
                      {"causal", true},
                      {"head_dim", d},
                      {"heads", heads},
                      {"kv_heads", kvh},
                      {"seq_len", seqs},
                      {"batch", batches},
                      {"seconds", secs}});
  }
  profile_["tables"]["attention_prefill"] = tables;
  // Held out: off-grid lengths and batches, uniform lengths (what the table describes).
  Rng rng{opt_.seed ^ 0xa77e};
  json ho = json::array();
  int nh = opt_.quick ? 4 : 16;
  for (int i = 0; i < nh; ++i) {
    int d = (i % 2) ? 128 : 64;
    std::int64_t S = rng.log_int(double(seqs.front()) * 1.2, double(seqs.back()) * 0.9);
    std::int64_t bmax = std::max<std::int64_t>(1, std::min<std::int64_t>(batches.back(), max_tokens / S));
    std::int64_t b = rng.log_int(1, double(bmax));
    double t = run(d, std::vector<int>(std::size_t(b), int(S)));
    ho.push_back({{"head_dim", d},
                  {"heads", heads},
                  {"kv_heads", kvh},
                  {"batch", b},
                  {"seq_len", S},
                  {"causal", true},
                  {"seconds", t}});
  }
  profile_["holdout"]["attention_prefill"] = ho;
  // Variable lengths in one batch (reported, not tabled).
  std::vector<int> mixed = {8192, 4096, 2048, 1000, 300, 17, 6000, 3000};
  double t = run(128, mixed);
  double f = 0;
  for (int l : mixed) f += causal_flops(1, heads, l, 128, true);
  add({"attention_prefill_own_varlen", "attention", "8 seqs 17..8192 d128", t, f / t / 1e12, "TFLOP/s", 300,
       "target"});
}

void Calibrator::attention_decode_tables() {
  cudaStream_t s = stream_.get();
  const int heads = 32, kvh = 8, D = 128, BS = 16;
  std::vector<std::int64_t> batches = opt_.quick ? std::vector<std::int64_t>{1, 8, 64} : pow2(1, 256);
  std::vector<std::int64_t> ctxs = opt_.quick ? std::vector<std::int64_t>{512, 4096} : pow2(256, 32768);
  std::int64_t max_tok = 0;
  for (auto b : batches)
    for (auto c : ctxs) max_tok = std::max(max_tok, b * c);
  std::int64_t pool_tokens = max_tok + (std::int64_t(64) << 10) * 4;  // headroom for rotation of small cases
  std::int64_t pool_blocks = pool_tokens / BS;
  std::size_t ce = std::size_t(pool_blocks) * kvh * BS * D;
  DeviceBuffer<bf16> kc(ce), vc(ce);
  fill_random(kc.get(), ce, Elem::BF16, opt_.seed + 8, 1.f, s);
  fill_random(vc.get(), ce, Elem::BF16, opt_.seed + 9, 1.f, s);
  std::int64_t maxb = batches.back();
  DeviceBuffer<bf16> q(std::size_t(std::max<std::int64_t>(maxb, 256)) * heads * D), out(q.size());
  fill_random(q.get(), q.size(), Elem::BF16, opt_.seed + 10, 1.f, s);
  DeviceBuffer<float> po(std::size_t(256) * heads * 64 * D), pl(std::size_t(256) * heads * 64);
  double l2 = prop_.l2CacheSize;
  auto run = [&](const std::vector<int>& ctx, double* kv_bytes) {
    int B = int(ctx.size());
    int maxc = *std::max_element(ctx.begin(), ctx.end());
    std::int64_t tok = 0;
    for (int c : ctx) tok += c;
    *kv_bytes = double(tok) * kvh * D * 2 * 2;
    int mbps = (maxc + BS - 1) / BS;
    std::int64_t used_blocks = 0;
    for (int c : ctx) used_blocks += (c + BS - 1) / BS;
    int copies = std::max(
        1, int(std::min<std::int64_t>(rotation_copies(*kv_bytes, l2, 64), pool_blocks / used_blocks)));
    // Block tables: copy c uses its own region of the pool, blocks shuffled inside it.
    std::vector<int> tables(std::size_t(copies) * B * mbps, 0);
    Rng rng{std::uint64_t(B) * 7919 + std::uint64_t(maxc)};
    for (int c = 0; c < copies; ++c) {
      std::vector<int> ids(static_cast<std::size_t>(used_blocks));
      std::iota(ids.begin(), ids.end(), int(c * used_blocks));
      rng.shuffle(ids);
      std::size_t u = 0;
      for (int b = 0; b < B; ++b)
        for (int j = 0; j < (ctx[b] + BS - 1) / BS; ++j)
          tables[(std::size_t(c) * B + b) * mbps + j] = ids[u++];
    }
    DeviceBuffer<int> dt(tables.size()), dc(ctx.size());
    CALIB_CUDA(cudaMemcpy(dt.get(), tables.data(), tables.size() * sizeof(int), cudaMemcpyHostToDevice));
    CALIB_CUDA(cudaMemcpy(dc.get(), ctx.data(), ctx.size() * sizeof(int), cudaMemcpyHostToDevice));
    DecodeArgs a;
    a.q = q.get();
    a.k_cache = kc.get();
    a.v_cache = vc.get();
    a.context_lens = dc.get();
    a.out = out.get();
    a.partial_o = po.get();
    a.partial_lse = pl.get();
    a.batch = B;
    a.heads = heads;
    a.kv_heads = kvh;
    a.max_blocks_per_seq = mbps;
    choose_decode_splits(a, ctx, prop_.multiProcessorCount);  // at most 64 splits: fits po, pl
    TimingOptions topt;
    topt.budget_ms = 20;
    return time_median_seconds(
        [&](int i) {
          DecodeArgs ai = a;
          ai.block_table = dt.get() + std::size_t(i % copies) * B * mbps;
          decode_attention(ai, s);
        },
        s, topt);
  };
  json secs = json::array();
  for (auto b : batches) {
    json row = json::array();
    for (auto c : ctxs) {
      double kvb = 0;
      double t = run(std::vector<int>(std::size_t(b), int(c)), &kvb);
      row.push_back(t);
      if ((b == 32 || b == 64 || b == 128) && (c == 2048 || c == 4096 || c == 8192))
        add({"decode_attention_own", "attention", cat("b", b, " ctx", c, " h32/8 d128"), t, kvb / t / 1e9,
             "GB/s", copy_GBps_, "copy"});
    }
    secs.push_back(row);
  }
  profile_["tables"]["attention_decode"] = {{"kernel", "own_paged_decode"},
                                            {"heads", heads},
                                            {"kv_heads", kvh},
                                            {"head_dim", D},
                                            {"block_size", BS},
                                            {"kv_dtype", "bf16"},
                                            {"batch", batches},
                                            {"context", ctxs},
                                            {"seconds", secs}};
  Rng rng{opt_.seed ^ 0xdec0};
  json ho = json::array();
  int nh = opt_.quick ? 4 : 16;
  for (int i = 0; i < nh; ++i) {
    int b = int(rng.log_int(double(batches.front()) + 0.6, double(batches.back()) * 0.9));
    int c = int(rng.log_int(double(ctxs.front()) * 1.2, double(ctxs.back()) * 0.9));
    double kvb = 0;
    double t = run(std::vector<int>(std::size_t(b), c), &kvb);
    ho.push_back(
        {{"batch", b}, {"context", c}, {"heads", heads}, {"kv_heads", kvh}, {"head_dim", D}, {"seconds", t}});
  }
  profile_["holdout"]["attention_decode"] = ho;
  // Mixed context lengths (reported).
  std::vector<int> mixed;
  for (int i = 0; i < 64; ++i) mixed.push_back(256 + (i * 977) % 8000);
  double kvb = 0;
  double t = run(mixed, &kvb);
  add({"decode_attention_own_mixed", "attention", "b64 ctx 256..8k h32/8 d128", t, kvb / t / 1e9, "GB/s",
       copy_GBps_, "copy"});
}

void Calibrator::gemm_sweeps() {
  cudaStream_t s = stream_.get();
  double l2 = prop_.l2CacheSize;
  std::vector<GemmDtype> dtypes = {GemmDtype::BF16, GemmDtype::FP16, GemmDtype::TF32, GemmDtype::FP8,
                                   GemmDtype::INT8};
  // m (tokens) at powers of two; n and k at powers of √2 rounded to multiples of 64 (aligned rows).
  auto root2 = [](std::int64_t lo, std::int64_t hi) {
    std::vector<std::int64_t> v;
    for (double x = double(lo); x <= double(hi) * 1.0001; x *= std::sqrt(2.0)) {
      std::int64_t r = std::int64_t(std::llround(x / 64)) * 64;
      if (v.empty() || r > v.back()) v.push_back(r);
    }
    return v;
  };
  // m at half octaves (2^j and 3·2^(j-1)): tokens between powers of two are common (e.g. 3 × 1024) and
  // the step from 2^j to 2^(j+1) is where interpolation in m erred most.
  std::vector<std::int64_t> ms, ns = root2(256, 32768), ks = root2(256, 32768);
  for (std::int64_t x : pow2(1, 32768)) {
    if (x >= 4) ms.push_back(x / 4 * 3);
    ms.push_back(x);
  }
  if (opt_.quick) {
    dtypes = {GemmDtype::BF16, GemmDtype::FP8};
    ms = {1, 16, 256, 4096, 16384};
    ns = {1024, 4096, 16384};
    ks = {1024, 4096, 16384};
  }
  if (opt_.shapes_only) {
    dtypes.clear();
    for (const auto& r : opt_.shapes)
      if (std::find(dtypes.begin(), dtypes.end(), r.dtype) == dtypes.end()) dtypes.push_back(r.dtype);
  }
  // Arenas hold the largest operands (32768² × 4 bytes, or the largest exact shape); small shapes
  // rotate through them.
  std::size_t largest =
      opt_.shapes_only ? 0 : std::size_t(ms.back()) * std::size_t(gemm_ld(GemmDtype::TF32, ks.back())) * 4;
  for (const auto& r : opt_.shapes) {  // the shape itself and its row over the token axis (m; k for NT)
    const bool nt = r.layout == GemmLayout::NT;
    const std::int64_t m = nt ? r.m : std::max(r.m, ms.back()), k = nt ? std::max(r.k, ms.back()) : r.k;
    const LayoutLd ld = layout_ld(r.layout, m, r.n, k, 16);
    largest = std::max({largest, std::size_t(ld.a_elems(m, k, r.layout)) * 4,
                        std::size_t(ld.b_elems(r.n, k, r.layout)) * 4, std::size_t(ld.y_elems(m)) * 4});
  }
  std::size_t arena = largest + (64u << 20);
  DeviceBuffer<unsigned char> X(arena), W(arena), Y(arena);
  DeviceBuffer<unsigned long long> clk(6);
  json tables = json::object(), ceil_t = json::object(), holdout = json::array(), exact = json::array(),
       rows = json::array();
  Rng rng{opt_.seed ^ 0x6e33};
  for (GemmDtype d : dtypes) {
    std::string dn = gemm_dtype_name(d);
    double ib = gemm_in_bytes(d), ob = gemm_out_bytes(d);
    fill_gemm_operand(X.get(), std::size_t(arena / ib), d, opt_.seed + 11, s);
    fill_gemm_operand(W.get(), std::size_t(arena / ib), d, opt_.seed + 12, s);
    double best = 0;
    // The multiprocessor clock just before and just after each measurement (MHz): under a power
    // cap the clock of a heavy GEMM depends on what ran before it, and the table keeps both readings
    // so that the cost model can refer every cell to one clock.
    double clk_before = 0, clk_after = 0;
    std::string algo;         // the last measurement's cuBLASLt algorithm (LtPlan::algo_signature)
    int eager_fallbacks = 0;  // launches that could not be captured into a graph (timed eagerly)
    auto measure = [&](std::int64_t m, std::int64_t n, std::int64_t k, GemmLayout lay = GemmLayout::TN) -> double {
      LtPlan plan(*lt_, d, m, n, k, lay);
      clk_before = clk_after = 0;
      algo = plan.algo_signature();
      if (!plan.ok()) return -1;
      const LayoutLd ld = layout_ld(lay, m, n, k, gemm_ld(d, 1));
      std::size_t xb = std::size_t(double(ld.a_elems(m, k, lay)) * ib),
                  wb = std::size_t(double(ld.b_elems(n, k, lay)) * ib), yb = std::size_t(m * plan.ldy() * ob);
      auto al = [](std::size_t b) { return (b + 255) / 256 * 256; };
      int copies = rotation_copies(double(xb + wb + yb), l2, 64);
      copies = int(std::max<std::size_t>(
          1, std::min<std::size_t>(copies, arena / std::max({al(xb), al(wb), al(yb)}))));
      TimingOptions topt;
      topt.warmup = 1;
      topt.min_iters = 3;
      topt.max_iters = 30;
      topt.budget_ms = 1.5;
      // Every sample a graph replay after a 30 µs spin (no host enqueue time inside a sample; the
      // grid before 2026-12-01 timed kernels of >= 0.1 ms eagerly: TimingMethod::Legacy).
      topt.graph_long_kernels = true;
      topt.lead_in = [&] { clock_meter(clk.get() + 4, 30000, s); };
      clock_meter(clk.get(), kClockWindowNs, s);
      bool captured = true;
      double t = time_graph_median_seconds(
          [&](int i) {
            std::size_t c = std::size_t(i % copies);
            plan.run(X.get() + c * al(xb), W.get() + c * al(wb), Y.get() + c * al(yb), s);
          },
          s, topt, copies, &captured);
      if (!captured) ++eager_fallbacks;
      clock_meter(clk.get() + 2, kClockWindowNs, s);
      unsigned long long h[4] = {};
      CALIB_CUDA(cudaMemcpyAsync(h, clk.get(), sizeof h, cudaMemcpyDeviceToHost, s));
      CALIB_CUDA(cudaStreamSynchronize(s));
      clk_before = h[1] ? 1e3 * double(h[0]) / double(h[1]) : 0;
      clk_after = h[3] ? 1e3 * double(h[2]) / double(h[3]) : 0;
      best = std::max(best, 2.0 * m * n * k / t);
      return t;
    };
    // Shapes timed in separate passes (each pass in a shuffled order), the median kept, so that an
    // error reported against them is not one sample's noise; the passes, their clock readings and
    // the algorithm are kept. Held-out shapes and a workload's exact shapes.
    struct Timed {
      std::int64_t m, n, k;
      std::vector<double> t;
      json clock_mhz = json::array();
      std::string algo;
      GemmLayout layout = GemmLayout::TN;
    };
    auto time_in_passes = [&](std::vector<Timed>& list, int passes, Rng& order_rng) {
      for (int r = 0; r < passes; ++r) {
        std::vector<std::size_t> order(list.size());
        std::iota(order.begin(), order.end(), std::size_t(0));
        order_rng.shuffle(order);
        for (std::size_t i : order) {
          list[i].t.push_back(measure(list[i].m, list[i].n, list[i].k, list[i].layout));
          list[i].clock_mhz.push_back({std::lround(clk_before), std::lround(clk_after)});
          list[i].algo = algo;
        }
      }
    };
    // The profile entry of a timed shape; null when a pass found no cuBLASLt algorithm.
    auto timed_json = [&](const Timed& o) -> json {
      if (std::any_of(o.t.begin(), o.t.end(), [](double t) { return t <= 0; })) return nullptr;
      std::vector<double> sorted = o.t;
      std::sort(sorted.begin(), sorted.end());
      json timed = {{"dtype", dn},
                    {"m", o.m},
                    {"n", o.n},
                    {"k", o.k},
                    {"seconds", sorted[sorted.size() / 2]},
                    {"repeats", o.t},
                    {"clock_mhz", o.clock_mhz},
                    {"algo", o.algo}};
      if (o.layout != GemmLayout::TN) timed["layout"] = gemm_layout_name(o.layout);
      return timed;
    };
    // Exact shapes of a workload, three passes.
    auto time_shapes = [&]() {
      std::vector<Timed> todo;
      for (const auto& r : opt_.shapes)
        if (r.dtype == d) todo.push_back({r.m, r.n, r.k, {}, json::array(), {}, r.layout});
      Rng srng{opt_.seed ^ 0x5a9e ^ std::uint64_t(d)};
      time_in_passes(todo, 3, srng);
      int refused = 0;
      for (const auto& o : todo) {
        json entry = timed_json(o);
        if (entry.is_null())
          ++refused;
        else
          exact.push_back(entry);
      }
      std::fprintf(stderr, "    %s: %zu exact shapes timed%s\n", dn.c_str(),
                   todo.size() - std::size_t(refused),
                   refused ? cat(" (", refused, " with no cuBLASLt algorithm, left out)").c_str() : "");
      // Each distinct (layout, n, k) of those shapes over the grid's m axis (for NT, the weight
      // gradient, each (m, n) over the same values of k: its token axis): a workload's layers run
      // their weights at every token count, and cuBLASLt's kernel choice at its exact sizes is what
      // the grid's neighbours cannot show.
      struct RowKey {
        GemmLayout layout;
        std::int64_t a, b;  // n, k (TN / NN) or m, n (NT)
        bool operator==(const RowKey& o) const { return layout == o.layout && a == o.a && b == o.b; }
      };
      std::vector<RowKey> nks;
      for (const auto& o : todo) {
        RowKey key = o.layout == GemmLayout::NT ? RowKey{o.layout, o.m, o.n} : RowKey{o.layout, o.n, o.k};
        if (std::find(nks.begin(), nks.end(), key) == nks.end()) nks.push_back(key);
      }
      std::vector<Timed> pts;
      for (const RowKey& r : nks)
        for (auto x : ms)
          pts.push_back(r.layout == GemmLayout::NT ? Timed{r.a, r.b, x, {}, json::array(), {}, r.layout}
                                                   : Timed{x, r.a, r.b, {}, json::array(), {}, r.layout});
      time_in_passes(pts, 3, srng);
      for (const RowKey& r : nks) {
        const bool nt = r.layout == GemmLayout::NT;
        json points = json::array();
        for (const auto& o : pts) {
          const RowKey key = nt ? RowKey{o.layout, o.m, o.n} : RowKey{o.layout, o.n, o.k};
          if (!(key == r)) continue;
          json entry = timed_json(o);
          if (entry.is_null()) continue;
          for (const char* f : {"dtype", "layout", nt ? "m" : "n", nt ? "n" : "k"}) entry.erase(f);
          points.push_back(entry);
        }
        if (points.empty()) continue;
        json row = {{"dtype", dn}};
        if (nt)
          row["layout"] = "nt", row["m"] = r.a, row["n"] = r.b;
        else {
          if (r.layout != GemmLayout::TN) row["layout"] = gemm_layout_name(r.layout);
          row["n"] = r.a, row["k"] = r.b;
        }
        row["points"] = points;
        rows.push_back(row);
      }
      std::fprintf(stderr, "    %s: %zu rows over %zu token counts timed\n", dn.c_str(), nks.size(),
                   ms.size());
    };
    if (opt_.shapes_only) {
      time_shapes();
      continue;
    }
    // Cells in a shuffled order: measured m-plane by m-plane, the large-m planes ran minutes of
    // back-to-back heavy GEMMs and timed ~10-15% slower (clocks under sustained power; the
    // gemm-probe saw −11% right after 3 s of 8192³ GEMMs) than the same shapes among mixed work.
    // Shuffled, every cell and every held-out shape sees the same average state.
    std::vector<double> cell(ms.size() * ns.size() * ks.size(), -1);
    std::vector<double> cell_clk0(cell.size(), 0), cell_clk1(cell.size(), 0);
    std::vector<std::string> cell_algo(cell.size());
    {
      std::vector<std::size_t> order(cell.size());
      std::iota(order.begin(), order.end(), std::size_t(0));
      Rng srng{opt_.seed ^ 0x5eed ^ std::uint64_t(d)};
      srng.shuffle(order);
      for (std::size_t c : order) {
        const std::size_t mi = c / (ns.size() * ks.size()), ni = c / ks.size() % ns.size(),
                          ki = c % ks.size();
        cell[c] = measure(ms[mi], ns[ni], ks[ki]);
        cell_clk0[c] = clk_before;
        cell_clk1[c] = clk_after;
        cell_algo[c] = algo;
      }
    }
    // A [m][n][k] JSON array of cell(c) for every grid cell c.
    auto grid = [&](auto&& cell_json) {
      json out = json::array();
      for (std::size_t mi = 0; mi < ms.size(); ++mi) {
        json plane = json::array();
        for (std::size_t ni = 0; ni < ns.size(); ++ni) {
          json row = json::array();
          for (std::size_t ki = 0; ki < ks.size(); ++ki)
            row.push_back(cell_json((mi * ns.size() + ni) * ks.size() + ki));
          plane.push_back(row);
        }
        out.push_back(plane);
      }
      return out;
    };
    auto seconds_of = [](double t) { return t > 0 ? json(t) : json(nullptr); };
    auto mhz_of = [](double f) { return f > 0 ? json(std::lround(f)) : json(nullptr); };
    // The algorithm cuBLASLt chose for each cell, as an index into the table's list of distinct ones.
    std::vector<std::string> algos;
    std::vector<int> cell_algo_index(cell.size(), -1);
    for (std::size_t c = 0; c < cell.size(); ++c) {
      if (cell_algo[c].empty()) continue;
      auto it = std::find(algos.begin(), algos.end(), cell_algo[c]);
      if (it == algos.end()) it = algos.insert(algos.end(), cell_algo[c]);
      cell_algo_index[c] = int(it - algos.begin());
    }
    tables[dn] = {{"m", ms},
                  {"n", ns},
                  {"k", ks},
                  {"seconds", grid([&](std::size_t c) { return seconds_of(cell[c]); })},
                  {"clock_mhz_before", grid([&](std::size_t c) { return mhz_of(cell_clk0[c]); })},
                  {"clock_mhz_after", grid([&](std::size_t c) { return mhz_of(cell_clk1[c]); })},
                  {"algos", algos},
                  {"algo", grid([&](std::size_t c) {
                     return cell_algo_index[c] >= 0 ? json(cell_algo_index[c]) : json(nullptr);
                   })},
                  {"layout", "Y[m,n] = X[m,k] W[n,k]^T (cuBLASLt TN)"}};
    // Alignment classes: k and n that are multiples of only e elements (e < 16 bytes / element)
    // run other, slower kernels. Measure t(m, x+e, x+e) / t(m, x, x) next to grid points.
    {
      int emax = int(16 / ib);
      std::vector<std::int64_t> am =
          opt_.quick ? std::vector<std::int64_t>{1, 1024} : std::vector<std::int64_t>{1, 32, 1024, 8192};
      std::vector<std::int64_t> ank =
          opt_.quick ? std::vector<std::int64_t>{4096} : std::vector<std::int64_t>{1024, 4096, 16384};
      // Three classes per alignment: n and k both misaligned, only n (the output's rows), only k
      // (both inputs' rows).
      json elems = json::array(), ratios = json::array(), ratios_n = json::array(), ratios_k = json::array();
      auto ratio = [](double base, double t) { return base > 0 && t > 0 ? json(t / base) : json(nullptr); };
      for (int el = 1; el < emax; el *= 2) {
        json plane = json::array(), plane_n = json::array(), plane_k = json::array();
        for (auto m : am) {
          json row = json::array(), row_n = json::array(), row_k = json::array();
          for (auto x : ank) {
            double base = measure(m, x, x);
            row.push_back(ratio(base, measure(m, x + el, x + el)));
            row_n.push_back(ratio(base, measure(m, x + el, x)));
            row_k.push_back(ratio(base, measure(m, x, x + el)));
          }
          plane.push_back(row);
          plane_n.push_back(row_n);
          plane_k.push_back(row_k);
        }
        elems.push_back(el);
        ratios.push_back(plane);
        ratios_n.push_back(plane_n);
        ratios_k.push_back(plane_k);
      }
      if (!elems.empty())
        tables[dn]["misaligned"] = {{"m", am},
                                    {"nk", ank},
                                    {"elements", elems},
                                    {"ratio", ratios},
                                    {"ratio_n", ratios_n},
                                    {"ratio_k", ratios_k},
                                    {"rule",
                                     "ratio: n and k both multiples of `elements` only; ratio_n: only n "
                                     "(k = nk); ratio_k: only k (n = nk); null: no cuBLASLt algorithm"}};
    }
    // Fit points: off-grid, aligned shapes (a separate random stream from the held-out ones)
    // from which the cost model fits its tile quanta, off-grid factor and clock exponent; like the
    // held-out shapes, every other one has n and k rounded to multiples of 128 (model dimensions).
    {
      Rng frng{opt_.seed ^ 0xf17 ^ std::uint64_t(d)};
      json fit = json::array();
      int nf = opt_.quick ? 8 : 120;
      for (int i = 0; i < nf; ++i) {
        std::int64_t al = i % 2 ? std::max<std::int64_t>(16 / std::int64_t(ib), 8) : 128;
        std::int64_t m = frng.log_int(1, double(ms.back()) * 0.9);
        std::int64_t n = (frng.log_int(double(ns.front()), double(ns.back()) * 0.9) + al - 1) / al * al;
        std::int64_t k = (frng.log_int(double(ks.front()), double(ks.back()) * 0.9) + al - 1) / al * al;
        double t = measure(m, n, k);
        if (t > 0)
          fit.push_back({{"m", m},
                         {"n", n},
                         {"k", k},
                         {"seconds", t},
                         {"clock_mhz", {std::lround(clk_before), std::lround(clk_after)}},
                         {"algo", algo}});
      }
      tables[dn]["fit_points"] = fit;
    }
    // Held-out shapes: half of them transformer-like (n, k multiples of 128), the rest arbitrary;
    // timed in `repeats` passes after the sweep.
    std::vector<Timed> held;
    int nh = opt_.quick ? 8 : 96, repeats = opt_.quick ? 2 : 3;
    for (int i = 0; i < nh; ++i) {
      std::int64_t m = rng.log_int(1, double(ms.back()) * 0.9);
      std::int64_t n = rng.log_int(double(ns.front()) * 1.1, double(ns.back()) * 0.9);
      std::int64_t k = rng.log_int(double(ks.front()) * 1.1, double(ks.back()) * 0.9);
      if (d == GemmDtype::FP8) {  // fp8 needs n and k multiples of 16
        n = (n + 15) / 16 * 16;
        k = (k + 15) / 16 * 16;
      }
      if (i % 2 == 0) {  // transformer-like multiples of 128
        n = (n + 127) / 128 * 128;
        k = (k + 127) / 128 * 128;
      }
      held.push_back({m, n, k, {}, json::array(), {}});
    }
    time_in_passes(held, repeats, rng);
    for (const auto& h : held) {
      json entry = timed_json(h);
      if (!entry.is_null()) holdout.push_back(entry);
    }
    time_shapes();
    double f8 = 2.0 * 8192 * 8192 * 8192;
    double t8 = measure(8192, 8192, 8192);
    add({cat("cublaslt_", dn), "gemm", "8192x8192x8192", t8, f8 / t8 / 1e12, "TFLOP/s", best / 1e12,
         "best in sweep"});
    ceil_t[dn] = best / 1e12;
    if (eager_fallbacks > 0)
      std::fprintf(stderr, "    %s: %d measurements timed eagerly (graph capture failed)\n", dn.c_str(),
                   eager_fallbacks);
    std::fprintf(stderr, "    %s: best %.0f TFLOP/s (%.1fs into stage)\n", dn.c_str(), best / 1e12,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - stage_t0_).count());
  }
  if (!opt_.shapes.empty()) {
    profile_["tables"]["gemm_shapes"] = exact;
    profile_["tables"]["gemm_rows"] = rows;
  }
  if (opt_.shapes_only) return;
  // The backward layouts against the forward one, on a sub-grid of the bf16 table (about 7 s; the
  // model uses bf16's ratios for the other 16-bit and tf32 tables, fp8 and int8 run TN only).
  if (tables.contains("bf16")) {
    GemmTimer timer(s, l2, std::size_t(16384) * 16384 * 2 + (64u << 20));
    timer.fill(GemmDtype::BF16, opt_.seed + 21);
    tables["bf16"]["layouts"] = layout_ratio_table(timer, *lt_, GemmDtype::BF16, layout_grid_axes(opt_.quick),
                                                   opt_.seed ^ 0x1a70);
    tables["bf16"]["layouts"]["runs"] = 1;
  }
  profile_["tables"]["gemm"] = tables;
  profile_["ceilings"]["gemm_TFLOPs"] = ceil_t;
  profile_["holdout"]["gemm"] = holdout;
}

nlohmann::ordered_json Calibrator::run_shapes() {
  opt_.shapes_only = true;
  stage_count_ = 1;
  stage("exact GEMM shapes and their (n, k) rows");
  gemm_sweeps();
  return profile_["tables"];
}

bool Calibrator::run_checks(nlohmann::ordered_json* out) {
  bool all = true;
  json arr = json::array();
  for (const auto& c : all_checks()) {
    CheckResult r;
    try {
      r = c.run(opt_.seed);
    } catch (const std::exception& ex) {
      r.name = c.name;
      r.ok = false;
      r.detail = ex.what();
    }
    std::fprintf(stderr, "  check %-32s %s  rel err %.2e (tol %.0e)  %s\n", r.name.c_str(),
                 r.ok ? "PASS" : "FAIL", r.max_rel_err, r.tolerance, r.ok ? "" : r.detail.c_str());
    all = all && r.ok;
    arr.push_back({{"name", r.name},
                   {"ok", r.ok},
                   {"max_rel_err", r.max_rel_err},
                   {"tolerance", r.tolerance},
                   {"detail", r.detail}});
  }
  if (out) *out = arr;
  return all;
}

bool Calibrator::run_only(const std::string& what) {
  if (what == "transpose") {
    int R = 4096, C = 4096;
    DeviceBuffer<float> in(std::size_t(R) * C), out(std::size_t(R) * C);
    fill_random(in.get(), in.size(), Elem::F32, opt_.seed, 1.f, nullptr);
    for (bool pad : {false, true}) transpose32(in.get(), out.get(), R, C, pad, nullptr);
  } else if (what == "gemm_mma") {
    int n = 4096;
    DeviceBuffer<bf16> A(std::size_t(n) * n), B(std::size_t(n) * n), C(std::size_t(n) * n);
    fill_random(A.get(), A.size(), Elem::BF16, opt_.seed, 1.f, nullptr);
    fill_random(B.get(), B.size(), Elem::BF16, opt_.seed + 1, 1.f, nullptr);
    gemm_mma(A.get(), B.get(), C.get(), n, n, n, nullptr);
  } else if (what == "gemm_wgmma") {
    for (int n : {1024, 4096}) {
      DeviceBuffer<bf16> A(std::size_t(n) * n), B(std::size_t(n) * n), C(std::size_t(n) * n);
      fill_random(A.get(), A.size(), Elem::BF16, opt_.seed, 1.f, nullptr);
      fill_random(B.get(), B.size(), Elem::BF16, opt_.seed + 1, 1.f, nullptr);
      gemm_wgmma(A.get(), B.get(), C.get(), n, n, n, nullptr);
      CALIB_CUDA(cudaDeviceSynchronize());
    }
  } else if (what == "attention") {
    int b = 4, S = 4096, heads = 32, kvh = 8, d = 128;
    std::size_t qe = std::size_t(b) * S * heads * d, ke = std::size_t(b) * S * kvh * d;
    DeviceBuffer<bf16> q(qe), k(ke), v(ke), o(qe);
    for (auto* p : {&q, &k, &v}) fill_random(p->get(), p->size(), Elem::BF16, opt_.seed, 1.f, nullptr);
    std::vector<int> cu;
    for (int i = 0; i <= b; ++i) cu.push_back(i * S);
    DeviceBuffer<int> dcu(cu.size());
    CALIB_CUDA(cudaMemcpy(dcu.get(), cu.data(), cu.size() * sizeof(int), cudaMemcpyHostToDevice));
    PrefillArgs a;
    a.q = q.get();
    a.k = k.get();
    a.v = v.get();
    a.o = o.get();
    a.cu_seqlens = dcu.get();
    a.num_seqs = b;
    a.max_seqlen = S;
    a.heads = heads;
    a.kv_heads = kvh;
    a.head_dim = d;
    attention_prefill(a, nullptr);
  } else if (what == "rmsnorm") {
    rmsnorm_sweep();
  } else if (what == "launch") {
    launch_overheads();
    std::printf("%s\n", profile_["ceilings"].dump(2).c_str());
  } else if (what == "power") {
    const json p = measure_power(*lt_, stream_.get(), double(prop_.l2CacheSize), default_power_workloads(),
                                 opt_.quick ? 1.0 : 3.0, 0.5, opt_.seed);
    std::printf("%s\n", json{{"power", p}}.dump(2).c_str());
  } else if (what == "kernels") {
    bandwidth();
    std::printf("copy %.0f GB/s, read %.0f GB/s\n", copy_GBps_, read_GBps_);
    memory_kernels();
    attention_decode_tables();
    std::printf("%s", decode_table_text().c_str());
    attention_prefill_tables();
    std::printf("%s", prefill_table_text().c_str());
    std::printf("%s", summary().c_str());
  } else {
    return false;
  }
  CALIB_CUDA(cudaDeviceSynchronize());
  return true;
}

nlohmann::ordered_json Calibrator::run() {
  stage_count_ = opt_.quick ? 8 : 9;
  stage("device information");
  device_info();
  stage("correctness checks");
  json checks;
  bool ok = run_checks(&checks);
  profile_["checks"] = checks;
  if (!ok) std::fprintf(stderr, "  WARNING: some correctness checks failed; see the profile's \"checks\"\n");
  stage("bandwidth, memory-bound table, launch overhead");
  bandwidth();
  stage("roadmap exercises: reduce, transpose, softmax, RMSNorm, SwiGLU, RoPE");
  exercises();
  memory_kernels();
  stage("own GEMMs vs cuBLASLt");
  own_gemm();
  stage("attention prefill table (own FlashAttention-2-style kernel)");
  attention_prefill_tables();
  stage("paged decode attention table (own kernel)");
  attention_decode_tables();
  stage("cuBLASLt GEMM sweeps");
  gemm_sweeps();
  if (!opt_.quick) {
    stage("sustained clock and power under back-to-back load");
    profile_["power"] = measure_power(*lt_, stream_.get(), double(prop_.l2CacheSize), default_power_workloads(),
                                      3.0, 0.5, opt_.seed);
  }
  json ks = json::array();
  for (const auto& r : results_) {
    double secs = r.seconds;
    ks.push_back({{"name", r.name},
                  {"group", r.group},
                  {"shape", r.shape},
                  {"seconds", secs},
                  {"achieved", r.achieved},
                  {"unit", r.unit},
                  {"ceiling", r.ceiling},
                  {"ceiling_name", r.ceiling_name},
                  {"fraction", r.ceiling > 0 ? r.achieved / r.ceiling : 0.0}});
  }
  profile_["kernels"] = ks;
  profile_["run_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  return profile_;
}

std::string Calibrator::prefill_table_text() const {
  std::ostringstream o;
  char b[64];
  const json& pre = profile_["tables"]["attention_prefill"];
  o << "prefill TFLOP/s (causal, 32/8 heads): seq_len | d64 by batch | d128 by batch\n";
  for (std::size_t i = 0; i < pre[0]["seq_len"].size(); ++i) {
    double S = pre[0]["seq_len"][i].get<double>();
    o << "| " << S;
    for (const json& t : pre)
      for (std::size_t j = 0; j < t["batch"].size(); ++j) {
        const json& sec = t["seconds"][i][j];
        if (sec.is_null()) {
          o << " | —";
          continue;
        }
        double f = causal_flops(t["batch"][j].get<double>(), 32, S, t["head_dim"].get<double>(), true);
        std::snprintf(b, sizeof b, " | %.0f", f / sec.get<double>() / 1e12);
        o << b;
      }
    o << " |\n";
  }
  return o.str();
}

std::string Calibrator::decode_table_text() const {
  std::ostringstream o;
  char b[64];
  const json& dec = profile_["tables"]["attention_decode"];
  o << "decode GB/s (KV bytes read / time): batch | by context\n";
  for (std::size_t i = 0; i < dec["batch"].size(); ++i) {
    double B = dec["batch"][i].get<double>();
    o << "| " << B;
    for (std::size_t j = 0; j < dec["context"].size(); ++j) {
      double kvb = B * dec["context"][j].get<double>() * 8 * 128 * 4;  // 8 KV heads, K and V, bf16
      std::snprintf(b, sizeof b, " | %.0f", kvb / dec["seconds"][i][j].get<double>() / 1e9);
      o << b;
    }
    o << " |\n";
  }
  return o.str();
}

std::string Calibrator::summary() const {
  std::ostringstream o;
  char line[256];
  std::snprintf(line, sizeof line, "%-30s %-28s %12s %12s %12s %7s  %s\n", "kernel", "shape", "time",
                "achieved", "ceiling", "frac", "ceiling is");
  o << line;
  for (const auto& r : results_) {
    std::string t = r.seconds < 1e-3 ? fmt("%.2f us", r.seconds * 1e6) : fmt("%.3f ms", r.seconds * 1e3);
    if (r.unit == "us") {
      std::snprintf(line, sizeof line, "%-30s %-28s %12s\n", r.name.c_str(), r.shape.c_str(), t.c_str());
    } else {
      std::snprintf(line, sizeof line, "%-30s %-28s %12s %7.1f %-4s %7.1f %-4s %6.0f%%  %s\n", r.name.c_str(),
                    r.shape.c_str(), t.c_str(), r.achieved, r.unit.c_str(), r.ceiling, r.unit.c_str(),
                    r.ceiling > 0 ? 100 * r.achieved / r.ceiling : 0.0, r.ceiling_name.c_str());
    }
    o << line;
  }
  return o.str();
}

}  // namespace infraplan::calib

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

#include "calib_kernels/calibrator_detail.hpp"
#include "calib_kernels/checks.hpp"
#include "calib_kernels/gemm_layouts.hpp"
#include "calib_kernels/kernels.hpp"
#include "calib_kernels/power_probe.hpp"
#include "calib_kernels/rng.hpp"
#include "calib_kernels/timing.hpp"

namespace infraplan::calib {

using namespace calibrator_detail;

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
                                 opt_.quick ? 1.0 : 3.0, 0.5, opt_.seed, opt_.power_fill);
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
  stage_count_ = opt_.quick || !opt_.power ? 8 : 9;
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
  if (!opt_.quick && opt_.power) {
    stage("sustained clock and power under back-to-back load");
    profile_["power"] = measure_power(*lt_, stream_.get(), double(prop_.l2CacheSize),
                                      default_power_workloads(), 3.0, 0.5, opt_.seed, opt_.power_fill);
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

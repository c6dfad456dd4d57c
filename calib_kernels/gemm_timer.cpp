#include "calib_kernels/gemm_timer.hpp"

#include <algorithm>
#include <vector>

#include "calib_kernels/kernels.hpp"
#include "calib_kernels/timing.hpp"

namespace infraplan::calib {

const char* gemm_api_name(GemmApi a) { return a == GemmApi::Lt ? "cublaslt" : "cublas"; }

const char* timing_method_name(TimingMethod m) { return m == TimingMethod::Graph ? "graph" : "legacy"; }

GemmTimer::GemmTimer(cudaStream_t stream, double l2_bytes, std::size_t arena_bytes)
    : s_(stream), l2_(l2_bytes), arena_(arena_bytes), x_(arena_bytes), w_(arena_bytes), y_(arena_bytes), clk_(6) {}

void GemmTimer::fill(GemmDtype d, std::uint64_t seed) {
  const double ib = gemm_in_bytes(d);
  fill_gemm_operand(x_.get(), std::size_t(double(arena_) / ib), d, seed, s_, fill_);
  fill_gemm_operand(w_.get(), std::size_t(double(arena_) / ib), d, seed + 1, s_, fill_);
  CALIB_CUDA(cudaStreamSynchronize(s_));
}

template <class Run>
GemmTiming GemmTimer::time_run(GemmDtype d, GemmLayout layout, std::int64_t m, std::int64_t n, std::int64_t k,
                               std::int64_t ldy, Run&& run) {
  GemmTiming g;
  const LayoutLd ld = layout_ld(layout, m, n, k, gemm_ld(d, 1));
  const double ib = gemm_in_bytes(d), ob = gemm_out_bytes(d);
  const std::size_t xb = std::size_t(double(ld.a_elems(m, k, layout)) * ib),
                    wb = std::size_t(double(ld.b_elems(n, k, layout)) * ib), yb = std::size_t(double(m * ldy) * ob);
  auto al = [](std::size_t b) { return (b + 255) / 256 * 256; };
  const std::size_t largest = std::max({al(xb), al(wb), al(yb)});
  if (largest > arena_) throw CudaError("GemmTimer: operands of this shape exceed the arenas");
  int copies = rotation_copies(double(xb + wb + yb), l2_, 64);
  copies = int(std::max<std::size_t>(1, std::min<std::size_t>(std::size_t(copies), arena_ / largest)));
  TimingOptions topt;
  topt.warmup = 1;
  topt.min_iters = 3;
  topt.max_iters = 30;
  topt.budget_ms = 1.5;
  if (method_ == TimingMethod::Graph) {
    topt.graph_long_kernels = true;
    topt.lead_in = [this] { clock_meter(clk_.get() + 4, 30000, s_); };
  }
  auto launch = [&](int i) {
    std::size_t c = std::size_t(i % copies);
    run(x_.get() + c * al(xb), w_.get() + c * al(wb), y_.get() + c * al(yb));
  };
  if (hold_ms_ <= 0) {
    clock_meter(clk_.get(), kClockWindowNs, s_);
    g.seconds = time_graph_median_seconds(launch, s_, topt, copies, &g.captured);
    clock_meter(clk_.get() + 2, kClockWindowNs, s_);
  } else {
    // Held: half the hold untimed (the same replays), then the kept half. Its clock is read between
    // launches of the shape (≥ 0.5 ms of them before and after each reading), as the power probe reads
    // it, never after the GPU has idled: a clock read behind a synchronised sample reads high.
    topt.min_iters = 5;
    topt.max_iters = 1 << 20;
    topt.budget_ms = hold_ms_ / 2;
    const double per_launch = time_graph_median_seconds(launch, s_, topt, copies);
    const int loaded = std::clamp(int(0.5e-3 / std::max(per_launch, 1e-6)) + 1, 2, 512);
    int j = 0;
    auto load = [&] {
      for (int b = 0; b < loaded; ++b) launch(j++);
    };
    std::vector<double> synced_mhz;
    if (nvml_ && nvml_->ok())
      topt.after_sample = [&] {
        const double f = nvml_->sm_clock_mhz();
        if (f > 0) synced_mhz.push_back(f);
      };
    load();
    clock_meter(clk_.get(), kClockWindowNs, s_);
    g.seconds = time_graph_median_seconds(launch, s_, topt, copies, &g.captured);
    load();
    clock_meter(clk_.get() + 2, kClockWindowNs, s_);
    load();
    if (nvml_ && nvml_->ok()) g.nvml_clock_mhz = nvml_->sm_clock_mhz();  // the GPU still busy with `load`
    if (!synced_mhz.empty()) {
      std::nth_element(synced_mhz.begin(), synced_mhz.begin() + long(synced_mhz.size() / 2),
                       synced_mhz.end());
      g.nvml_synced_clock_mhz = synced_mhz[synced_mhz.size() / 2];
    }
  }
  unsigned long long h[4] = {};
  CALIB_CUDA(cudaMemcpyAsync(h, clk_.get(), sizeof h, cudaMemcpyDeviceToHost, s_));
  CALIB_CUDA(cudaStreamSynchronize(s_));
  g.clock_before_mhz = h[1] ? 1e3 * double(h[0]) / double(h[1]) : 0;
  g.clock_after_mhz = h[3] ? 1e3 * double(h[2]) / double(h[3]) : 0;
  return g;
}

GemmTiming GemmTimer::time_lt(const LtHandle& lt, GemmDtype d, GemmLayout layout, std::int64_t m, std::int64_t n,
                              std::int64_t k) {
  LtPlan plan(lt, d, m, n, k, layout);
  if (!plan.ok()) return {};
  GemmTiming g = time_run(d, layout, m, n, k, plan.ldy(),
                          [&](const void* x, const void* w, void* y) { plan.run(x, w, y, s_); });
  g.algo = plan.algo_signature();
  return g;
}

GemmTiming GemmTimer::time_cublas(const CublasHandle& cb, GemmDtype d, GemmLayout layout, std::int64_t m,
                                  std::int64_t n, std::int64_t k) {
  GemmExPlan plan(cb, d, m, n, k, layout);
  if (!plan.ok()) return {};
  return time_run(d, layout, m, n, k, plan.ldy(), [&](const void* x, const void* w, void* y) { plan.run(x, w, y); });
}

}  // namespace infraplan::calib

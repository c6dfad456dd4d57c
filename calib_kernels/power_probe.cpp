#include "calib_kernels/power_probe.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <thread>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/gemm_timer.hpp"
#include "calib_kernels/kernels.hpp"
#include "calib_kernels/nvml_reader.hpp"
#include "calib_kernels/timing.hpp"

namespace infraplan::calib {
namespace {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

double mean(const std::vector<double>& v) {
  double s = 0;
  int n = 0;
  for (double x : v)
    if (std::isfinite(x)) s += x, ++n;
  return n ? s / n : std::nan("");
}

json finite_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

/// Holds a GPU buffer set and enqueues a workload's unit (rotated operands).
class Unit {
 public:
  Unit(const LtHandle& lt, cudaStream_t s, double l2, const PowerWorkload& w, std::uint64_t seed,
       FillDistribution fill)
      : w_(w), s_(s) {
    if (w.kind == "gemm" || w.kind == "mixed") {
      plan_ = std::make_unique<LtPlan>(lt, w.dtype, w.m, w.n, w.k, w.layout);
      if (!plan_->ok()) throw CudaError("power probe: cuBLASLt has no algorithm for " + describe());
      const double ib = gemm_in_bytes(w.dtype), ob = gemm_out_bytes(w.dtype);
      const LayoutLd ld = layout_ld(w.layout, w.m, w.n, w.k, gemm_ld(w.dtype, 1));
      xb_ = align(std::size_t(double(ld.a_elems(w.m, w.k, w.layout)) * ib));
      wb_ = align(std::size_t(double(ld.b_elems(w.n, w.k, w.layout)) * ib));
      yb_ = align(std::size_t(double(w.m * plan_->ldy()) * ob));
      copies_ = rotation_copies(double(xb_ + wb_ + yb_), l2, 16);
      x_ = DeviceBuffer<unsigned char>(xb_ * copies_);
      wt_ = DeviceBuffer<unsigned char>(wb_ * copies_);
      y_ = DeviceBuffer<unsigned char>(yb_ * copies_);
      fill_gemm_operand(x_.get(), std::size_t(double(x_.bytes()) / ib), w.dtype, seed + 1, s, fill);
      fill_gemm_operand(wt_.get(), std::size_t(double(wt_.bytes()) / ib), w.dtype, seed + 2, s, fill);
    }
    if (w.kind == "attention") {
      // Causal prefill attention, batch kAttB × kAttS tokens, 32 query / 8 KV heads of 128 (the
      // project's FlashAttention-2-style kernel): a training step's attention.
      const std::size_t qe = std::size_t(kAttB) * kAttS * 32 * 128, ke = std::size_t(kAttB) * kAttS * 8 * 128;
      q_ = DeviceBuffer<bf16>(qe), k_ = DeviceBuffer<bf16>(ke), v_ = DeviceBuffer<bf16>(ke), o_ = DeviceBuffer<bf16>(qe);
      for (auto* b : {&q_, &k_, &v_}) fill_random(b->get(), b->size(), Elem::BF16, seed + 5, 1.f, s);
      std::vector<int> cu;
      for (int i = 0; i <= kAttB; ++i) cu.push_back(i * kAttS);
      cu_ = DeviceBuffer<int>(cu.size());
      CALIB_CUDA(cudaMemcpy(cu_.get(), cu.data(), cu.size() * sizeof(int), cudaMemcpyHostToDevice));
    }
    if (w.kind == "decode") {
      // Paged decode attention, kDecB sequences of kDecCtx cached tokens, 32 query / 8 KV heads of
      // 128, 16-token blocks in shuffled order (the project's paged decode kernel): a serving
      // decode step's attention. The KV read (~1 GiB) is far beyond L2.
      constexpr int kv = 8, D = 128, BS = 16;
      const int blocks_per_seq = kDecCtx / BS;
      const std::size_t pool = std::size_t(kDecB) * blocks_per_seq;
      k_ = DeviceBuffer<bf16>(pool * kv * BS * D), v_ = DeviceBuffer<bf16>(pool * kv * BS * D);
      for (auto* b : {&k_, &v_}) fill_random(b->get(), b->size(), Elem::BF16, seed + 6, 1.f, s);
      q_ = DeviceBuffer<bf16>(std::size_t(kDecB) * 32 * D), o_ = DeviceBuffer<bf16>(q_.size());
      fill_random(q_.get(), q_.size(), Elem::BF16, seed + 7, 1.f, s);
      std::vector<int> ids(pool);
      for (std::size_t i = 0; i < pool; ++i) ids[i] = int(i);
      std::uint64_t r = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      for (std::size_t i = pool; i > 1; --i) {  // Fisher–Yates with a fixed LCG: reproducible
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        std::swap(ids[i - 1], ids[std::size_t((r >> 33) % i)]);
      }
      tables_ = DeviceBuffer<int>(pool);
      ctx_ = DeviceBuffer<int>(kDecB);
      const std::vector<int> ctx(kDecB, kDecCtx);
      CALIB_CUDA(cudaMemcpy(tables_.get(), ids.data(), pool * sizeof(int), cudaMemcpyHostToDevice));
      CALIB_CUDA(cudaMemcpy(ctx_.get(), ctx.data(), ctx.size() * sizeof(int), cudaMemcpyHostToDevice));
      partial_o_ = DeviceBuffer<float>(std::size_t(kDecB) * 32 * 64 * D);
      partial_lse_ = DeviceBuffer<float>(std::size_t(kDecB) * 32 * 64);
      int dev = 0, sms = 0;
      CALIB_CUDA(cudaGetDevice(&dev));
      CALIB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
      dec_.q = q_.get(), dec_.k_cache = k_.get(), dec_.v_cache = v_.get(), dec_.block_table = tables_.get();
      dec_.context_lens = ctx_.get(), dec_.out = o_.get(), dec_.partial_o = partial_o_.get();
      dec_.partial_lse = partial_lse_.get(), dec_.batch = kDecB, dec_.heads = 32, dec_.kv_heads = kv;
      dec_.max_blocks_per_seq = blocks_per_seq;
      choose_decode_splits(dec_, ctx, sms);
    }
    if (w.kind == "elementwise" || w.mix_with == "elementwise") {
      // SwiGLU over a [rows, 2·ffn] bf16 tensor (fp32 math): a training step's elementwise kernel.
      gu_ = DeviceBuffer<bf16>(std::size_t(kEwRows) * 2 * kEwFfn);
      ew_out_ = DeviceBuffer<bf16>(std::size_t(kEwRows) * kEwFfn);
      fill_random(gu_.get(), gu_.size(), Elem::BF16, seed + 4, 1.f, s);
    }
    if (w.kind == "copy" || w.mix_with == "copy") {
      n4_ = std::size_t(w.copy_bytes / 16);
      src_ = DeviceBuffer<float4>(n4_);
      dst_ = DeviceBuffer<float4>(n4_);
      fill_random(src_.get(), n4_ * 4, Elem::F32, seed + 3, 1.f, s);
    }
    CALIB_CUDA(cudaStreamSynchronize(s));
  }
  std::string describe() const {
    if (w_.kind == "copy") return "copy " + std::to_string(std::int64_t(w_.copy_bytes)) + " B";
    if (w_.kind == "elementwise") return "swiglu " + std::to_string(kEwRows) + "x" + std::to_string(kEwFfn);
    if (w_.kind == "attention") return "attention " + std::to_string(kAttB) + "x" + std::to_string(kAttS);
    if (w_.kind == "decode") return "decode " + std::to_string(kDecB) + "x" + std::to_string(kDecCtx);
    return std::string(gemm_dtype_name(w_.dtype)) + " " + std::to_string(w_.m) + "x" + std::to_string(w_.n) + "x" +
           std::to_string(w_.k) + " " + gemm_layout_name(w_.layout);
  }
  void gemm(int i) const {
    const std::size_t c = std::size_t(i % copies_);
    plan_->run(x_.get() + c * xb_, wt_.get() + c * wb_, y_.get() + c * yb_, s_);
  }
  void copy() const { copy_kernel(src_.get(), dst_.get(), n4_, s_); }
  void elementwise() const { swiglu(gu_.get(), ew_out_.get(), kEwRows, kEwFfn, s_); }
  void attention() const {
    PrefillArgs a;
    a.q = q_.get(), a.k = k_.get(), a.v = v_.get(), a.o = o_.get(), a.cu_seqlens = cu_.get();
    a.num_seqs = kAttB, a.max_seqlen = kAttS, a.heads = 32, a.kv_heads = 8, a.head_dim = 128, a.causal = true;
    attention_prefill(a, s_);
  }
  /// HBM bytes of one elementwise kernel (reads gate and up, writes the product).
  static double elementwise_bytes() { return 6.0 * kEwRows * double(kEwFfn); }
  /// The mixture's period: g GEMMs then c copies (or one wait kernel of `idle_ns`).
  void set_mix(int g, int c, unsigned idle_ns) { mix_g_ = g, mix_c_ = c, idle_ns_ = idle_ns; }
  void run(int i) const {
    if (w_.kind == "gemm") return gemm(i);
    if (w_.kind == "copy") return copy();
    if (w_.kind == "elementwise") return elementwise();
    if (w_.kind == "attention") return attention();
    if (w_.kind == "decode") return decode_attention(dec_, s_);
    for (int j = 0; j < mix_g_; ++j) gemm(i * mix_g_ + j);
    if (w_.mix_with == "copy")
      for (int j = 0; j < mix_c_; ++j) copy();
    else if (w_.mix_with == "elementwise")
      for (int j = 0; j < mix_c_; ++j) elementwise();
    else
      wait_kernel(idle_ns_, 1, s_);
  }
  double flops_per_unit() const {
    if (w_.kind == "copy" || w_.kind == "elementwise") return 0;
    if (w_.kind == "decode") return 4.0 * kDecB * 32.0 * kDecCtx * 128.0;  // q·Kᵀ and p·V, CUDA cores
    if (w_.kind == "attention")  // QKᵀ and PV under the causal mask (diagonal included)
      return 4.0 * kAttB * 32.0 * (double(kAttS) * (kAttS + 1) / 2) * 128.0;
    return 2.0 * double(w_.m) * double(w_.n) * double(w_.k) * (w_.kind == "mixed" ? mix_g_ : 1);
  }
  double bytes_per_unit() const {
    const double cp = 2.0 * double(n4_) * 16.0;
    if (w_.kind == "copy") return cp;
    if (w_.kind == "elementwise") return 0;
    if (w_.kind == "attention") return 2.0 * double(q_.bytes() + k_.bytes() + v_.bytes());
    if (w_.kind == "decode") return double(k_.bytes() + v_.bytes());  // the KV read
    const double g = double(xb_ + wb_ + yb_);
    return w_.kind == "mixed" ? g * mix_g_ + (w_.mix_with == "copy" ? cp * mix_c_ : 0.0) : g;
  }
  /// Elementwise kernels' bytes per unit (their own class of draw: fp32 math on every element).
  double elementwise_bytes_per_unit() const {
    if (w_.kind == "elementwise") return elementwise_bytes();
    return w_.mix_with == "elementwise" ? elementwise_bytes() * mix_c_ : 0.0;
  }
  int copies() const { return copies_; }

 private:
  static std::size_t align(std::size_t b) { return (b + 255) / 256 * 256; }
  PowerWorkload w_;
  cudaStream_t s_;
  std::unique_ptr<LtPlan> plan_;
  static constexpr int kEwRows = 8192, kEwFfn = 14336;
  static constexpr int kAttB = 4, kAttS = 4096;
  static constexpr int kDecB = 256, kDecCtx = 1024;
  DeviceBuffer<int> tables_, ctx_;
  DeviceBuffer<float> partial_o_, partial_lse_;
  DecodeArgs dec_;
  DeviceBuffer<bf16> q_, k_, v_, o_;
  DeviceBuffer<int> cu_;
  std::size_t xb_ = 0, wb_ = 0, yb_ = 0, n4_ = 0;
  DeviceBuffer<bf16> gu_, ew_out_;
  int copies_ = 1;
  DeviceBuffer<unsigned char> x_, wt_, y_;
  DeviceBuffer<float4> src_, dst_;
  int mix_g_ = 1, mix_c_ = 0;
  unsigned idle_ns_ = 0;
};

/// Seconds of one launch sequence timed as the grids time it: graph replays after a 30 µs spin.
double burst_seconds(const std::function<void(int)>& launch, cudaStream_t s, int copies, unsigned long long* clk) {
  TimingOptions topt;
  topt.warmup = 1;
  topt.min_iters = 3;
  topt.max_iters = 30;
  topt.budget_ms = 1.5;
  topt.graph_long_kernels = true;
  topt.lead_in = [&] { clock_meter(clk + 4, 30000, s); };
  return time_graph_median_seconds(launch, s, topt, copies);
}

double mhz_of(const unsigned long long* h) { return h[1] ? 1e3 * double(h[0]) / double(h[1]) : std::nan(""); }

}  // namespace

std::vector<PowerWorkload> default_power_workloads() {
  std::vector<PowerWorkload> v;
  auto gemm = [&](const char* role, std::int64_t m, std::int64_t n, std::int64_t k, GemmDtype d = GemmDtype::BF16,
                  GemmLayout l = GemmLayout::TN) {
    PowerWorkload w;
    w.role = role, w.m = m, w.n = n, w.k = k, w.dtype = d, w.layout = l;
    v.push_back(w);
  };
  // Fit: squares from light to heavy, weight streaming (few rows), one fp8, a copy.
  gemm("fit", 8192, 8192, 8192);
  gemm("fit", 4096, 4096, 4096);
  gemm("fit", 2048, 2048, 2048);
  gemm("fit", 1024, 1024, 1024);
  gemm("fit", 512, 8192, 8192);
  gemm("fit", 16, 8192, 8192);
  gemm("fit", 8192, 8192, 8192, GemmDtype::FP8);
  PowerWorkload cp;
  cp.kind = "copy", cp.role = "fit", cp.copy_bytes = double(1u << 30);
  v.push_back(cp);
  // Held out: transformer GEMMs in their three layouts (Llama 3 405B at TP 8, 8B, LLaMA-2 7B) and
  // mixtures of a heavy GEMM with a copy or with an idle GPU.
  gemm("holdout", 8192, 13312, 16384);
  gemm("holdout", 8192, 16384, 6656);
  gemm("holdout", 16384, 6656, 8192, GemmDtype::BF16, GemmLayout::NT);
  gemm("holdout", 8192, 16384, 13312, GemmDtype::BF16, GemmLayout::NN);
  gemm("holdout", 4096, 14336, 4096);
  gemm("holdout", 4096, 4096, 11008);
  gemm("holdout", 2048, 4096, 4096, GemmDtype::BF16, GemmLayout::NT);
  // Mixtures: a heavy GEMM alternating with an idle GPU (a pipeline bubble, a host-bound gap) or with a
  // copy (memory-bound kernels), at periods from 4 ms to 256 ms: how long the power limiter
  // averages. The idle ones at 16, 64 and 256 ms are fit points of that time; the others held out.
  auto mix = [&](const char* role, const char* with, double share, double period_ms) {
    PowerWorkload mx;
    mx.kind = "mixed", mx.role = role, mx.m = mx.n = mx.k = 8192, mx.gemm_share = share, mx.mix_with = with;
    mx.copy_bytes = double(1u << 28), mx.period_s = period_ms * 1e-3;
    v.push_back(mx);
  };
  mix("holdout", "copy", 0.6, 4);
  mix("holdout", "idle", 0.6, 4);
  mix("fit", "idle", 0.6, 16);
  mix("fit", "idle", 0.6, 64);
  mix("fit", "idle", 0.6, 256);
  mix("holdout", "idle", 0.8, 32);
  mix("holdout", "copy", 0.6, 64);
  // Elementwise kernels (SwiGLU, fp32 math per element) draw more than a copy of the same bytes: a
  // fit point of their own, and a transformer-like alternation held out.
  PowerWorkload ew;
  ew.kind = "elementwise", ew.role = "fit";
  v.push_back(ew);
  mix("holdout", "elementwise", 0.8, 4);
  mix("holdout", "elementwise", 0.5, 4);
  // Attention (matmul work on tensor cores with softmax between): held out against the law's
  // 16-bit matmul term.
  PowerWorkload att;
  att.kind = "attention", att.role = "holdout";
  v.push_back(att);
  // A serving decode step's kernels, held out: LLaMA-2 7B's layer GEMMs at 256 rows (fused QKV,
  // fused gate-up, down) and paged decode attention over 256 × 1,024 cached tokens.
  gemm("holdout", 256, 12288, 4096);
  gemm("holdout", 256, 22016, 4096);
  gemm("holdout", 256, 4096, 11008);
  PowerWorkload dec;
  dec.kind = "decode", dec.role = "holdout";
  v.push_back(dec);
  return v;
}

json measure_power(const LtHandle& lt, cudaStream_t s, double l2_bytes,
                   const std::vector<PowerWorkload>& workloads, double hold_s, double rest_s,
                   std::uint64_t seed, FillDistribution fill) {
  int dev = 0;
  CALIB_CUDA(cudaGetDevice(&dev));
  NvmlReader nvml(dev);
  DeviceBuffer<unsigned long long> clk(6 + 2 * 4096);
  // Idle power: the GPU after rest_s with nothing to run.
  CALIB_CUDA(cudaDeviceSynchronize());
  std::this_thread::sleep_for(std::chrono::duration<double>(rest_s));
  const double idle_w = nvml.power_w();
  json points = json::array();
  std::uint64_t k = 0;
  for (const PowerWorkload& w : workloads) {
    Unit u(lt, s, l2_bytes, w, seed + 16 * ++k, fill);
    // Burst: after rest_s idle, as a grid cell is timed (for mixtures: one GEMM and one copy, to
    // size the period).
    std::this_thread::sleep_for(std::chrono::duration<double>(rest_s));
    unsigned long long h[4] = {};
    clock_meter(clk.get(), kClockWindowNs, s);
    double burst = 0;
    json mix_info;
    if (w.kind == "mixed") {
      const double tg = burst_seconds([&](int i) { u.gemm(i); }, s, u.copies(), clk.get());
      const double period = w.period_s;
      const int g = std::max(1, int(std::lround(w.gemm_share * period / tg)));
      const double rest = double(g) * tg * (1 - w.gemm_share) / w.gemm_share;
      int c = 0;
      unsigned idle_ns = 0;
      double other = 0;
      if (w.mix_with == "copy") {
        const double tc = burst_seconds([&](int) { u.copy(); }, s, 1, clk.get());
        c = std::max(1, int(std::lround(rest / tc)));
        other = double(c) * tc;
      } else if (w.mix_with == "elementwise") {
        const double te = burst_seconds([&](int) { u.elementwise(); }, s, 1, clk.get());
        c = std::max(1, int(std::lround(rest / te)));
        other = double(c) * te;
      } else {
        idle_ns = unsigned(std::lround(rest * 1e9));
        other = double(idle_ns) * 1e-9;
      }
      u.set_mix(g, c, idle_ns);
      mix_info = {{"period_s", period},
                  {"gemms_per_period", g},
                  {"gemm_burst_seconds", tg},
                  {"other_burst_seconds", other}};
      burst = burst_seconds([&](int i) { u.run(i); }, s, u.copies(), clk.get());
    } else {
      burst = burst_seconds([&](int i) { u.run(i); }, s, u.copies(), clk.get());
    }
    clock_meter(clk.get() + 2, kClockWindowNs, s);
    CALIB_CUDA(cudaMemcpyAsync(h, clk.get(), sizeof h, cudaMemcpyDeviceToHost, s));
    CALIB_CUDA(cudaStreamSynchronize(s));
    const double burst_clock = mhz_of(h + 2);

    // Sustained: a graph of ~20 ms of units replayed back to back, at most 3 replays in flight;
    // the first half of hold_s settles, the second is measured (replay times by events, the clock on
    // the GPU between replays, power and NVML's clock on the host every ~100 ms).
    const int units = std::clamp(int(std::ceil(20e-3 / std::max(burst, 1e-7))), 1, 4096);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    CALIB_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < units; ++i) u.run(i);
    CALIB_CUDA(cudaStreamEndCapture(s, &graph));
    CALIB_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    constexpr int kRing = 3;
    Event ev[kRing][2];
    std::vector<double> replay_ms, power, nvml_clock, temp;
    std::vector<int> meter_slots;
    unsigned long long reasons = 0;
    const auto t0 = Clock::now();
    auto last_read = t0;
    int launched = 0, done = 0, meters = 0;
    bool measuring = false;
    int first_measured = -1;
    while (true) {
      const double t = seconds_since(t0);
      if (t >= hold_s && done == launched) break;
      if (t < hold_s && launched - done < kRing) {
        auto& e = ev[launched % kRing];
        CALIB_CUDA(cudaEventRecord(e[0].get(), s));
        CALIB_CUDA(cudaGraphLaunch(exec, s));
        CALIB_CUDA(cudaEventRecord(e[1].get(), s));
        if (measuring && meters < 4096 && launched % 4 == 0) {
          clock_meter(clk.get() + 6 + 2 * meters, kClockWindowNs, s);
          ++meters;
        }
        if (!measuring && t >= hold_s / 2) measuring = true, first_measured = launched;
        ++launched;
        continue;
      }
      auto& e = ev[done % kRing];
      CALIB_CUDA(cudaEventSynchronize(e[1].get()));
      float ms = 0;
      CALIB_CUDA(cudaEventElapsedTime(&ms, e[0].get(), e[1].get()));
      if (first_measured >= 0 && done >= first_measured) replay_ms.push_back(double(ms));
      ++done;
      if (measuring && std::chrono::duration<double>(Clock::now() - last_read).count() >= 0.1) {
        last_read = Clock::now();
        power.push_back(nvml.power_w());
        nvml_clock.push_back(nvml.sm_clock_mhz());
        temp.push_back(nvml.temperature_c());
        reasons |= nvml.clock_event_reasons();
      }
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    std::vector<unsigned long long> hm(std::size_t(2 * meters));
    if (meters)
      CALIB_CUDA(cudaMemcpy(hm.data(), clk.get() + 6, hm.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    std::vector<double> gpu_clock;
    for (int i = 0; i < meters; ++i) gpu_clock.push_back(mhz_of(hm.data() + 2 * i));
    const double sustained = median(replay_ms) * 1e-3 / units;

    json p;
    p["kind"] = w.kind;
    p["role"] = w.role;
    if (w.kind == "gemm" || w.kind == "mixed") {
      p["dtype"] = gemm_dtype_name(w.dtype);
      p["layout"] = gemm_layout_name(w.layout);
      p["m"] = w.m, p["n"] = w.n, p["k"] = w.k;
    }
    if (w.kind == "copy" || w.mix_with == "copy") p["copy_bytes"] = w.copy_bytes;
    if (w.kind == "mixed") {
      p["gemm_share"] = w.gemm_share, p["mix_with"] = w.mix_with;
      for (auto it = mix_info.begin(); it != mix_info.end(); ++it) p[it.key()] = it.value();
    }
    p["flops"] = u.flops_per_unit();
    p["bytes"] = u.bytes_per_unit();
    if (u.elementwise_bytes_per_unit() > 0) p["elementwise_bytes"] = u.elementwise_bytes_per_unit();
    p["burst"] = {{"seconds", burst}, {"clock_mhz", finite_or_null(burst_clock)}};
    p["sustained"] = {{"seconds", sustained},
                      {"replays", replay_ms.size()},
                      {"clock_mhz", finite_or_null(median(gpu_clock))},
                      {"nvml_clock_mhz", finite_or_null(median(nvml_clock))},
                      {"power_w", finite_or_null(mean(power))},
                      {"temperature_c", finite_or_null(mean(temp))},
                      {"clock_event_reasons", reasons}};
    std::fprintf(stderr, "power: %-32s burst %9.1f us @ %4.0f MHz  sustained %9.1f us @ %4.0f MHz %5.0f W\n",
                 u.describe().c_str(), burst * 1e6, burst_clock, sustained * 1e6, median(gpu_clock), mean(power));
    points.push_back(p);
  }
  json out;
  out["method"] =
      "each workload held back to back for hold_s seconds (CUDA-graph replays of ~20 ms, at most 3 in flight); "
      "the second half measured: seconds per unit = median replay / units, clock_mhz = median of on-GPU "
      "clock readings between replays, power_w = mean NVML board power every ~100 ms; burst = the same unit "
      "timed as the calibration grids time a cell (graph replays after a 30 us spin) after rest_s idle";
  out["hold_s"] = hold_s;
  out["rest_s"] = rest_s;
  out["nvml"] = nvml.ok();
  out["limit_w"] = finite_or_null(nvml.limit_w());
  out["idle_w"] = finite_or_null(idle_w);
  out["max_clock_mhz"] = finite_or_null(nvml.max_sm_clock_mhz());
  out["gemm_operands"] = fill_distribution_name(fill);
  out["points"] = points;
  return out;
}

}  // namespace infraplan::calib

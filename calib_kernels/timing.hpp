#pragma once
// The timing harness: warm-up, CUDA events around each launch, median. Inputs are rotated by the
// caller: `launch(i)` receives the iteration index and picks copy i % copies of its inputs, so
// that with copies × bytes ≥ 3 × L2 no launch finds its inputs in L2.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <vector>

#include "calib_kernels/cuda_util.hpp"

namespace infraplan::calib {

struct TimingOptions {
  int warmup = 2;          ///< launches before timing starts
  int min_iters = 5;       ///< timed launches, at least
  int max_iters = 50;      ///< timed launches, at most
  double budget_ms = 4.0;  ///< timed launches stop once their sum exceeds this (after min_iters)
  /// Keep launching (untimed) until the warm-up has run this long on the host's clock: a GPU
  /// coming from other work reaches its steady clock for this kernel within a few ms.
  double warmup_ms = 0.0;
  /// Enqueued before each sample's start event (e.g. a ~30 µs spin kernel): the GPU is busy while
  /// the host enqueues the sample, so the host's enqueue time (a library call's several µs, a
  /// graph launch) is not counted as idle GPU time inside the sample. Empty: none.
  std::function<void()> lead_in;
  /// time_graph_median_seconds: replay graphs for kernels of ≥ 0.1 ms too (one launch, or the
  /// rotation's, per graph) instead of timing them as time_median_seconds does.
  bool graph_long_kernels = false;
  /// Called after each timed sample has completed (its stop event synchronised), e.g. to read the
  /// board's clock while a shape is held. Empty: none.
  std::function<void()> after_sample;
};

namespace timing_detail {

/// Milliseconds between two events around what `enqueue()` puts on `stream`.
template <class F>
double event_ms(cudaStream_t stream, const Event& start, const Event& stop, F&& enqueue) {
  CALIB_CUDA(cudaEventRecord(start.get(), stream));
  enqueue();
  CALIB_CUDA(cudaEventRecord(stop.get(), stream));
  CALIB_CUDA(cudaEventSynchronize(stop.get()));
  float t = 0;
  CALIB_CUDA(cudaEventElapsedTime(&t, start.get(), stop.get()));
  return double(t);
}

/// opt.warmup launches, then more (untimed) until opt.warmup_ms have passed; advances i.
inline void warm_up(const std::function<void(int)>& launch, cudaStream_t stream, const TimingOptions& opt,
                    int& i) {
  for (int w = 0; w < opt.warmup; ++w) launch(i++);
  CALIB_CUDA(cudaStreamSynchronize(stream));
  if (opt.warmup_ms <= 0) return;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() <
         opt.warmup_ms) {
    for (int b = 0; b < 8; ++b) launch(i++);
    CALIB_CUDA(cudaStreamSynchronize(stream));
  }
}

/// Median seconds per launch over samples of `per_sample` launches each (`sample()` returns a
/// sample's milliseconds): at least opt.min_iters samples, then until their sum passes
/// opt.budget_ms, at most opt.max_iters.
template <class F>
double median_per_launch(const TimingOptions& opt, int per_sample, F&& sample) {
  std::vector<double> ms;
  double total = 0;
  for (int it = 0; it < opt.max_iters; ++it) {
    double t = sample();
    if (opt.after_sample) opt.after_sample();
    ms.push_back(t / per_sample);
    total += t;
    if (it + 1 >= opt.min_iters && total > opt.budget_ms) break;
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2] * 1e-3;
}

}  // namespace timing_detail

/// Median seconds of one `launch(i)` on `stream`. Each sample is a pair of events around
/// `batch` back-to-back launches divided by `batch`, where batch makes a sample last ≥ ~200 µs:
/// short kernels are then timed as they run in a busy stream (launch gaps included, no idle GPU
/// between the first event and the kernel), long ones one launch per sample. The batch is sized
/// from the fastest of three single launches: one launch alone includes the idle stream's launch
/// latency (several µs), and sizing from one such outlier left 10 µs kernels timed one at a time,
/// latency included (±50% between passes).
inline double time_median_seconds(const std::function<void(int)>& launch, cudaStream_t stream,
                                  const TimingOptions& opt = {}) {
  using namespace timing_detail;
  Event start;
  Event stop;
  int i = 0;
  warm_up(launch, stream, opt, i);
  auto sample = [&](int batch) {
    if (opt.lead_in) opt.lead_in();
    return event_ms(stream, start, stop, [&] {
      for (int b = 0; b < batch; ++b) launch(i++);
    });
  };
  double first = sample(1);
  if (first < 1.0) first = std::min({first, sample(1), sample(1)});  // ms; long kernels need no batch
  const int batch = std::clamp(int(0.2 / std::max(first, 1e-4)), 1, 256);
  return median_per_launch(opt, batch, [&] { return sample(batch); });
}

/// Like time_median_seconds, but a sample of a short kernel is one replay of a CUDA graph that
/// holds `max(batch, rotation)` launches (batch: a sample of ≥ ~100 µs, sized from the fastest of
/// three single launches): the GPU runs them back to back with no host work in between. The
/// enqueue cost of a library call (cuBLASLt's is several µs of host time) is then neither in the
/// sample nor in its spread; what remains per launch is the GPU's own time plus the graph's gap
/// between kernels. `rotation` (the caller's number of input copies) keeps every replay's working
/// set as large as the eager loop's. Kernels of ≥ 0.1 ms are timed as time_median_seconds does
/// (one launch per sample) unless opt.graph_long_kernels (then a graph of max(1, rotation)
/// launches; with opt.lead_in no host time falls inside a sample). When the launches cannot be
/// captured it falls back to time_median_seconds and sets *captured = false.
inline double time_graph_median_seconds(const std::function<void(int)>& launch, cudaStream_t stream,
                                        const TimingOptions& opt = {}, int rotation = 1,
                                        bool* captured = nullptr) {
  using namespace timing_detail;
  if (captured) *captured = true;
  Event start;
  Event stop;
  int i = 0;
  warm_up(launch, stream, opt, i);
  auto single = [&] {
    if (opt.lead_in) opt.lead_in();
    return event_ms(stream, start, stop, [&] { launch(i++); });
  };
  double first = single();
  if (first < 1.0) first = std::min({first, single(), single()});
  // Replays have no host jitter to average out: samples of ≥ ~100 µs suffice (and halve the graph).
  const int batch = std::clamp(int(0.1 / std::max(first, 1e-4)), 1, 128);
  if (batch == 1 && !opt.graph_long_kernels) return time_median_seconds(launch, stream, opt);
  const int n = std::max(batch, rotation);
  cudaGraph_t graph = nullptr;
  CALIB_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  bool ok = true;
  try {
    for (int b = 0; b < n; ++b) launch(i++);
  } catch (const std::exception&) {
    ok = false;
  }
  cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  cudaGraphExec_t exec = nullptr;
  if (!ok || ended != cudaSuccess || graph == nullptr ||
      cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    if (graph) cudaGraphDestroy(graph);
    if (captured) *captured = false;
    return time_median_seconds(launch, stream, opt);
  }
  CALIB_CUDA(cudaGraphLaunch(exec, stream));  // the graph's own first replay (upload) untimed
  double t = median_per_launch(opt, n, [&] {
    if (opt.lead_in) opt.lead_in();
    return event_ms(stream, start, stop, [&] { CALIB_CUDA(cudaGraphLaunch(exec, stream)); });
  });
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return t;
}

/// How many copies of a working set of `bytes` make ≥ 3 × L2 (at least 1, at most `max_copies`).
inline int rotation_copies(double bytes, double l2_bytes, int max_copies = 64) {
  if (bytes <= 0) return 1;
  int c = int(3.0 * l2_bytes / bytes) + 1;
  return std::clamp(c, 1, max_copies);
}

}  // namespace infraplan::calib

#pragma once
// A kernel's GPU time as a serving step sees it: every sample first moves 2 × L2 of other data
// through the cache, runs what the kernel needs beforehand (`prepare`, e.g. writing its main input
// as the GEMM before it would), then the kernel; the same sample without the kernel is subtracted.
// CUDA-graph replays, median (calib::time_graph_median_seconds).
// How the cache is flushed: engine/l2_flush.hpp.
#include <algorithm>
#include <cstddef>
#include <functional>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"
#include "calib_kernels/timing.hpp"
#include "engine/l2_flush.hpp"

namespace infraplan::engine {

class InStepTimer {
 public:
  InStepTimer(cudaStream_t stream, calib::TimingOptions opt, L2Flush how = L2Flush::Write)
      : stream_(stream), opt_(opt), how_(how) {
    int l2 = 0, dev = 0;
    CALIB_CUDA(cudaGetDevice(&dev));
    CALIB_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    bytes_ = std::max<std::size_t>(std::size_t(2) * std::size_t(l2), std::size_t(64) << 20);
    bytes_ = (bytes_ + 15) / 16 * 16;
    flush_ = calib::DeviceBuffer<unsigned char>(bytes_);
    CALIB_CUDA(cudaMemsetAsync(flush_.get(), 1, bytes_, stream_));
    CALIB_CUDA(cudaStreamSynchronize(stream_));
  }
  /// Seconds of `run` after `prepare` (may be empty), at least 0.1 µs.
  double seconds(const std::function<void()>& run, const std::function<void()>& prepare = {}) const {
    auto sample = [&](bool with_kernel) {
      return calib::time_graph_median_seconds(
          [&](int) {
            if (how_ == L2Flush::Read)
              calib::read_kernel(reinterpret_cast<const float4*>(flush_.get()), bytes_ / 16, sink_.get(),
                                 stream_);
            else
              CALIB_CUDA(cudaMemsetAsync(flush_.get(), 1, bytes_, stream_));
            if (prepare) prepare();
            if (with_kernel) run();
          },
          stream_, opt_);
    };
    const double base = sample(false);
    return std::max(sample(true) - base, 1e-7);
  }

 private:
  cudaStream_t stream_;
  calib::TimingOptions opt_;
  L2Flush how_;
  std::size_t bytes_ = 0;
  calib::DeviceBuffer<unsigned char> flush_;
  calib::DeviceBuffer<float> sink_{4096};
};

}  // namespace infraplan::engine

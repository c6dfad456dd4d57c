#pragma once
// GemmTimer: times one GEMM shape in one operand layout through cuBLASLt (first heuristic) or the
// classic cublasGemmEx path, as the calibration sweeps do: operands rotated through large random
// arenas (≥ 3 × L2 per sample), CUDA-graph replays for short kernels (timing.hpp), median, and the
// multiprocessor clock read just before and just after (the cost model refers times to one clock).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "calib_kernels/cublas_gemm.hpp"
#include "calib_kernels/cublas_gemmex.hpp"
#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/gemm_layout.hpp"
#include "calib_kernels/nvml_reader.hpp"

namespace infraplan::calib {

/// Window of the clock readings around a measurement (ns of the global timer).
constexpr unsigned kClockWindowNs = 20000;

/// Which cuBLAS entry point a GEMM goes through.
enum class GemmApi {
  Lt,      ///< cublasLtMatmul with the heuristic's first algorithm (the calibration grid's choice)
  Cublas,  ///< cublasGemmEx, CUBLAS_GEMM_DEFAULT (PyTorch's default for matmul without bias)
};
/// "cublaslt", "cublas".
const char* gemm_api_name(GemmApi a);

/// How a shape is timed.
enum class TimingMethod {
  /// Every sample a CUDA-graph replay (max(launches of ≥ 0.1 ms, input copies) launches), after a
  /// 30 µs spin kernel that keeps the GPU busy while the host enqueues the sample: the kernels'
  /// own time plus the graph's gaps, no host time. What a framework's CUDA-graph replay sees.
  Graph,
  /// As the committed H200 profile's grid was timed (before 2026-12-01): graphs for kernels under
  /// 0.1 ms, kernels of ≥ 0.1 ms one launch per sample between events on an idle stream (the
  /// host's enqueue time of the call falls inside the sample).
  Legacy,
};
const char* timing_method_name(TimingMethod m);

/// One timed shape.
struct GemmTiming {
  double seconds = -1;               ///< median per launch; < 0: no algorithm for this shape
  double clock_before_mhz = 0;       ///< SM clock just before the measurement (0 = unknown)
  double clock_after_mhz = 0;        ///< SM clock just after
  std::string algo;                  ///< LtPlan::algo_signature (empty through cublasGemmEx)
  bool captured = true;              ///< false: graph capture failed, timed eagerly
  /// Held shapes (GemmTimer::set_hold_ms) with an NVML reader: NVML's SM clock read while the GPU
  /// runs the shape after the kept half, and the median of the readings taken after each kept sample
  /// had been synchronised (the GPU briefly idle); 0 = not read.
  double nvml_clock_mhz = 0;
  double nvml_synced_clock_mhz = 0;
};

class GemmTimer {
 public:
  /// Three operand arenas of `arena_bytes` each on `stream`; `l2_bytes` sizes the rotation.
  GemmTimer(cudaStream_t stream, double l2_bytes, std::size_t arena_bytes);
  /// Fills the arenas with random operands of format `d` (never zeros; int8 scale 8) drawn from the
  /// timer's fill distribution.
  void fill(GemmDtype d, std::uint64_t seed);
  /// The distribution of the following fills (uniform by default).
  void set_fill(FillDistribution f) { fill_ = f; }
  FillDistribution fill_distribution() const { return fill_; }
  /// Times Y = op(X)·op(W) of `layout` through cuBLASLt's first heuristic on `lt`.
  GemmTiming time_lt(const LtHandle& lt, GemmDtype d, GemmLayout layout, std::int64_t m, std::int64_t n,
                     std::int64_t k);
  /// The same through cublasGemmEx on `cb` (whose stream must be this timer's).
  GemmTiming time_cublas(const CublasHandle& cb, GemmDtype d, GemmLayout layout, std::int64_t m, std::int64_t n,
                         std::int64_t k);
  /// Largest operand (bytes) the arenas hold once.
  std::size_t arena_bytes() const { return arena_; }
  /// The method of the following measurements (Graph by default).
  void set_method(TimingMethod m) { method_ = m; }
  TimingMethod method() const { return method_; }
  /// Hold each following shape for `ms` of replays (0: the usual ~1.5 ms of samples): the first half
  /// untimed, so the board's power limiter settles on the shape; the time is the median of the second
  /// half, the on-GPU clock read between launches of the shape just before and just after that half,
  /// and, with `nvml` (not owned; may be null), NVML's readings (GemmTiming). A held shape's clock is
  /// the steady one it runs at, not the one the previous shape left.
  void set_hold_ms(double ms, const NvmlReader* nvml) { hold_ms_ = ms, nvml_ = nvml; }
  double hold_ms() const { return hold_ms_; }

 private:
  template <class Run>
  GemmTiming time_run(GemmDtype d, GemmLayout layout, std::int64_t m, std::int64_t n, std::int64_t k,
                      std::int64_t ldy, Run&& run);
  cudaStream_t s_;
  double hold_ms_ = 0;
  const NvmlReader* nvml_ = nullptr;
  double l2_;
  std::size_t arena_;
  DeviceBuffer<unsigned char> x_, w_, y_;
  DeviceBuffer<unsigned long long> clk_;
  TimingMethod method_ = TimingMethod::Graph;
  FillDistribution fill_ = FillDistribution::Uniform;
};

}  // namespace infraplan::calib

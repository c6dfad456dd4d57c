#pragma once
// The calibration run: measures ceilings, the project's own kernels, cuBLASLt GEMM tables,
// attention and memory-bound tables and held-out shapes, and assembles the profile JSON
// (schema in docs/calibration.md).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calib_kernels/cublas_gemm.hpp"
#include "calib_kernels/cuda_util.hpp"

namespace infraplan::calib {

/// One GEMM shape a workload runs (infraplan simulate --gemm-shapes-out), timed exactly.
struct GemmShapeRequest {
  GemmDtype dtype = GemmDtype::BF16;
  std::int64_t m = 0, n = 0, k = 0;
  GemmLayout layout = GemmLayout::TN;  ///< operand layout (calib_kernels/gemm_layout.hpp)
};

struct CalibrateOptions {
  bool quick = false;                       ///< reduced grids (≤ 1 minute on an H200)
  bool power = true;                        ///< stage 9, the sustained-clock probe (`--no-power` skips it)
  std::string gpu_name = "h200-sxm-141gb";  ///< catalog name written into the profile
  std::string command;                      ///< the command line, echoed into the profile
  std::uint64_t seed = 20261129;
  bool verbose = false;
  /// Exact GEMM shapes to time after the sweeps ("tables.gemm_shapes"); with shapes_only, nothing else.
  std::vector<GemmShapeRequest> shapes;
  bool shapes_only = false;
  /// The power probe's GEMM operands (`--fill`): uniform in ±1, or normal as a framework's.
  FillDistribution power_fill = FillDistribution::Uniform;
};

/// One row of the summary table and of the profile's "kernels" list.
struct KernelResult {
  std::string name;          ///< e.g. "reduce_warp_shuffle"
  std::string group;         ///< "bandwidth", "reduce", "transpose", "softmax", "gemm", "attention", "memory"
  std::string shape;         ///< human-readable problem size
  double seconds = 0;        ///< median time per launch
  double achieved = 0;       ///< GB/s (1e9 B/s) or TFLOP/s (1e12)
  std::string unit;          ///< "GB/s" or "TFLOP/s"
  double ceiling = 0;        ///< same unit
  std::string ceiling_name;  ///< what the ceiling is ("copy", "read", "cublas bf16 same shape", ...)
};

class Calibrator {
 public:
  explicit Calibrator(CalibrateOptions opt);
  ~Calibrator();
  /// Runs every stage; returns the profile.
  nlohmann::ordered_json run();
  /// Runs only the correctness checks; returns false if any failed.
  bool run_checks(nlohmann::ordered_json* out);
  /// Only the own-GEMM table, then every gemm_wgmma tile configuration at the same shapes (to
  /// tune the launcher's choice); results() and summary() hold both.
  void run_gemm();
  /// Runs one kernel group once, for a profiler to attach to: "transpose" (both variants),
  /// "gemm_mma" (4096³), "gemm_wgmma" (1024³ then 4096³), "attention" (prefill b4 S4096 d128);
  /// "kernels": the copy ceiling, RMSNorm/SwiGLU/RoPE and the attention tables, printed. False for
  /// an unknown name.
  bool run_only(const std::string& what);
  /// Only opt.shapes, each timed in three passes like the held-out shapes, and each distinct
  /// (n, k) of them over the grid's m axis: {"gemm_shapes": [...], "gemm_rows": [...]} (the
  /// profile's tables of those names, schema in docs/calibration.md).
  nlohmann::ordered_json run_shapes();
  const std::vector<KernelResult>& results() const { return results_; }
  /// The summary table (each kernel: achieved vs ceiling).
  std::string summary() const;

 private:
  void stage(const std::string& name);
  void device_info();
  void bandwidth();
  /// Host launch rate, launch + sync, graph replay per kernel and the eager gap between
  /// dependent kernels (ceilings.launch_us, launch_sync_us, graph_kernel_us, eager_kernel_gap_us).
  void launch_overheads();
  void exercises();
  void memory_kernels();
  /// The prefill / decode tables as docs/calibration.md shows them (after their table stage).
  std::string prefill_table_text() const;
  std::string decode_table_text() const;
  void rmsnorm_sweep();
  void own_gemm();
  void attention_prefill_tables();
  void attention_decode_tables();
  void gemm_sweeps();
  void add(KernelResult r);

  CalibrateOptions opt_;
  Stream stream_;
  cudaDeviceProp prop_{};
  std::unique_ptr<LtHandle> lt_;
  nlohmann::ordered_json profile_;
  std::vector<KernelResult> results_;
  double copy_GBps_ = 0, read_GBps_ = 0;
  int stage_no_ = 0, stage_count_ = 8;
  std::chrono::steady_clock::time_point t0_, stage_t0_;
};

}  // namespace infraplan::calib

#pragma once
// LtGemm: the engine's GEMMs through cuBLASLt, Y[m][n] = X[m][k] · W[n][k]ᵀ (row-major, the
// weight layout of engine/weight_layout.hpp), fp32 accumulation. Inputs bf16 with a bf16 or fp32
// output (the LM head's logits), or FP8 E4M3 with one fp32 dequantization scale per operand in
// device memory (CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER: Y = x_scale · w_scale · X·Wᵀ) and a bf16
// output. cuBLASLt is column-major: the row-major Y = X·Wᵀ is its C'[n][m] = W'ᵀ · X' with
// A' = W (k × n, transposed) and B' = X (k × m, not transposed) — the "TN" form that Hopper's
// fp8 kernels require. One plan (descriptors + the heuristic's first algorithm) per distinct
// (m, n, k, output type, input type), made on first use and kept; prepare() makes them ahead of
// a CUDA-graph capture. An fp8 plan is described with scale pointers set (placeholders), so that
// the heuristic picks kernels that apply them. Owns the cuBLASLt handle and its workspace (RAII).
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "calib_kernels/cuda_util.hpp"

namespace infraplan::engine {

/// The GEMM's input type: bf16, or FP8 E4M3 for both operands (W8A8).
enum class GemmInput { BF16, FP8 };

class LtGemm {
 public:
  explicit LtGemm(std::size_t workspace_bytes = std::size_t(32) << 20);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  /// Enqueues Y = X · Wᵀ. X: [m][k] bf16, W: [n][k] bf16, Y: [m][n] bf16 (or float when out_f32).
  void run(const __nv_bfloat16* X, const __nv_bfloat16* W, void* Y, int m, int n, int k, bool out_f32,
           cudaStream_t stream);
  /// Enqueues Y = x_scale · w_scale · X · Wᵀ. X: [m][k] E4M3, W: [n][k] E4M3, the scales one
  /// fp32 each in device memory (read when the GEMM runs; 16-byte aligned pointers, see
  /// kFp8ScaleStride in engine/fp8_kernels.hpp), Y: [m][n] bf16. k % 16 == 0 and n % 8 == 0
  /// (16-byte aligned rows).
  void run_fp8(const __nv_fp8_e4m3* X, const float* x_scale, const __nv_fp8_e4m3* W, const float* w_scale,
               __nv_bfloat16* Y, int m, int n, int k, cudaStream_t stream);
  /// Makes the plan of this shape now (before a graph capture).
  void prepare(int m, int n, int k, bool out_f32, GemmInput in = GemmInput::BF16);
  /// Asks the heuristic now for every 64-row bucket of (n, k) from 128 up to `max_rows` rows, so
  /// that no step later waits on a query (mixed steps bring new row counts). Returns the queries.
  int warm_buckets(int n, int k, bool out_f32, int max_rows, GemmInput in = GemmInput::BF16);
  /// Times up to `candidates` of cuBLASLt's ranked algorithms for this shape on these buffers
  /// (valid for it; not during a capture) and keeps the fastest for every later run of the
  /// shape. Returns {heuristic's first choice, chosen} times, seconds (median of 3 runs each).
  std::pair<double, double> tune(const __nv_bfloat16* X, const __nv_bfloat16* W, void* Y, int m, int n, int k,
                                 bool out_f32, cudaStream_t stream, int candidates = 6);
  /// The same for an fp8 GEMM (run_fp8's operands).
  std::pair<double, double> tune_fp8(const __nv_fp8_e4m3* X, const float* x_scale, const __nv_fp8_e4m3* W,
                                     const float* w_scale, __nv_bfloat16* Y, int m, int n, int k,
                                     cudaStream_t stream, int candidates = 6);
  std::size_t plans() const { return plans_.size(); }

 private:
  struct Plan;
  /// What a plan is made for: rows, columns, depth, fp32 output, input type.
  using Key = std::tuple<int, int, int, bool, GemmInput>;
  struct Operands {
    const void* X = nullptr;
    const void* W = nullptr;
    void* Y = nullptr;
    const float* x_scale = nullptr;  // fp8 only
    const float* w_scale = nullptr;  // fp8 only
  };
  const Plan& plan(const Key& key);
  std::unique_ptr<Plan> describe(const Key& key) const;
  std::vector<cublasLtMatmulAlgo_t> ranked(const Plan& p, int count) const;
  cublasStatus_t launch(const Plan& p, const Operands& o, cudaStream_t stream) const;
  std::pair<double, double> tune_key(const Key& key, const Operands& o, cudaStream_t stream, int candidates);

  cublasLtHandle_t h_ = nullptr;
  calib::DeviceBuffer<unsigned char> ws_;
  /// 1.0f at [0] and [64] (256-byte aligned): the scale pointers an fp8 plan is described and
  /// queried with. cuBLASLt's
  /// heuristic may otherwise pick a kernel that runs without scales and refuses them at launch
  /// (CUBLAS_STATUS_NOT_SUPPORTED, seen on the H200 with cuBLAS 13.0); each launch then sets
  /// the call's own pointers.
  calib::DeviceBuffer<float> unit_scales_;
  std::map<Key, std::unique_ptr<Plan>> plans_;
  /// cuBLASLt's first choice per (rows rounded up to 64, n, k, fp32 out, input type): a heuristic
  /// query costs ~0.5 ms of host time, and mixed steps bring a new row count at nearly every step.
  std::map<Key, cublasLtMatmulAlgo_t> bucket_algos_;
};

}  // namespace infraplan::engine

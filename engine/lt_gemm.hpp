#pragma once
// LtGemm: the engine's GEMMs through cuBLASLt, Y[m][n] = X[m][k] · W[n][k]ᵀ (row-major, the
// weight layout of engine/weight_layout.hpp), bf16 inputs, fp32 accumulation, bf16 or fp32
// output (the LM head's logits). One plan (descriptors + the heuristic's first algorithm) per
// distinct (m, n, k, output type), made on first use and kept; prepare() makes them ahead of a
// CUDA-graph capture. Owns the cuBLASLt handle and its workspace (RAII).
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "calib_kernels/cuda_util.hpp"

namespace infraplan::engine {

class LtGemm {
 public:
  explicit LtGemm(std::size_t workspace_bytes = std::size_t(32) << 20);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  /// Enqueues Y = X · Wᵀ. X: [m][k] bf16, W: [n][k] bf16, Y: [m][n] bf16 (or float when out_f32).
  void run(const __nv_bfloat16* X, const __nv_bfloat16* W, void* Y, int m, int n, int k, bool out_f32,
           cudaStream_t stream);
  /// Makes the plan of this shape now (before a graph capture).
  void prepare(int m, int n, int k, bool out_f32);
  /// Asks the heuristic now for every 64-row bucket of (n, k) from 128 up to `max_rows` rows, so
  /// that no step later waits on a query (mixed steps bring new row counts). Returns the queries.
  int warm_buckets(int n, int k, bool out_f32, int max_rows);
  /// Times up to `candidates` of cuBLASLt's ranked algorithms for this shape on these buffers
  /// (valid for it; not during a capture) and keeps the fastest for every later run of the
  /// shape. Returns {heuristic's first choice, chosen} times, seconds (median of 3 runs each).
  std::pair<double, double> tune(const __nv_bfloat16* X, const __nv_bfloat16* W, void* Y, int m, int n, int k,
                                 bool out_f32, cudaStream_t stream, int candidates = 6);
  std::size_t plans() const { return plans_.size(); }

 private:
  struct Plan;
  const Plan& plan(int m, int n, int k, bool out_f32);
  std::unique_ptr<Plan> describe(int m, int n, int k, bool out_f32) const;
  std::vector<cublasLtMatmulAlgo_t> ranked(const Plan& p, int count) const;
  cublasStatus_t launch(const Plan& p, const void* X, const void* W, void* Y, cudaStream_t stream) const;

  cublasLtHandle_t h_ = nullptr;
  calib::DeviceBuffer<unsigned char> ws_;
  std::map<std::tuple<int, int, int, bool>, std::unique_ptr<Plan>> plans_;
  /// cuBLASLt's first choice per (rows rounded up to 64, n, k, fp32 out): a heuristic query costs
  /// ~0.5 ms of host time, and mixed steps bring a new row count at nearly every step.
  std::map<std::tuple<int, int, int, bool>, cublasLtMatmulAlgo_t> bucket_algos_;
};

}  // namespace infraplan::engine

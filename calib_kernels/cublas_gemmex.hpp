#pragma once
// The classic cuBLAS path (cublasGemmEx, the library's own default algorithm choice): what PyTorch
// calls for a plain matmul / F.linear without bias unless its preferred BLAS backend is cuBLASLt
// (torch.backends.cuda.preferred_blas_library()). Same operand layouts as LtPlan.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "calib_kernels/cublas_gemm.hpp"
#include "calib_kernels/gemm_layout.hpp"

namespace infraplan::calib {

/// A cuBLAS handle bound to one stream, with its own workspace (set by cublasSetWorkspace, as
/// PyTorch does: 32 MiB on Hopper by default), so that its calls can be captured into a graph.
class CublasHandle {
 public:
  CublasHandle(cudaStream_t stream, std::size_t workspace_bytes = std::size_t(32) << 20);
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
  void* ws_ = nullptr;
};

/// One GEMM shape through cublasGemmEx (bf16, fp16: fp32 compute; tf32: fast-tf32 compute).
/// fp8 and int8 are not offered here (ok() false).
class GemmExPlan {
 public:
  GemmExPlan(const CublasHandle& h, GemmDtype d, std::int64_t m, std::int64_t n, std::int64_t k,
             GemmLayout layout);
  bool ok() const { return ok_; }
  /// Enqueues the GEMM on the handle's stream (operands as LtPlan::run describes).
  void run(const void* X, const void* W, void* Y) const;
  std::int64_t ldy() const { return ld_.y; }

 private:
  const CublasHandle& h_;
  GemmDtype d_;
  GemmLayout layout_;
  std::int64_t m_, n_, k_;
  LayoutLd ld_;
  bool ok_ = false;
};

}  // namespace infraplan::calib

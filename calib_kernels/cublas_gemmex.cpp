#include "calib_kernels/cublas_gemmex.hpp"

#include <climits>

#include "calib_kernels/cuda_util.hpp"

namespace infraplan::calib {

CublasHandle::CublasHandle(cudaStream_t stream, std::size_t workspace_bytes) {
  CALIB_CUBLAS(cublasCreate(&h_));
  CALIB_CUBLAS(cublasSetStream(h_, stream));
  CALIB_CUDA(cudaMalloc(&ws_, workspace_bytes));
  CALIB_CUBLAS(cublasSetWorkspace(h_, ws_, workspace_bytes));
}

CublasHandle::~CublasHandle() {
  if (h_) cublasDestroy(h_);
  if (ws_) cudaFree(ws_);
}

GemmExPlan::GemmExPlan(const CublasHandle& h, GemmDtype d, std::int64_t m, std::int64_t n, std::int64_t k,
                       GemmLayout layout)
    : h_(h), d_(d), layout_(layout), m_(m), n_(n), k_(k), ld_(layout_ld(layout, m, n, k, 1)) {
  ok_ = (d == GemmDtype::BF16 || d == GemmDtype::FP16 || d == GemmDtype::TF32) && m <= INT_MAX && n <= INT_MAX &&
        k <= INT_MAX;
}

void GemmExPlan::run(const void* X, const void* W, void* Y) const {
  cudaDataType_t t = d_ == GemmDtype::BF16 ? CUDA_R_16BF : d_ == GemmDtype::FP16 ? CUDA_R_16F : CUDA_R_32F;
  cublasComputeType_t comp = d_ == GemmDtype::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const float alpha = 1.f, beta = 0.f;
  // Column-major C'[n][m] = op(A')·op(B') with A' = W, B' = X (see LtPlan).
  cublasOperation_t ta = layout_ == GemmLayout::TN ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t tb = layout_ == GemmLayout::NT ? CUBLAS_OP_T : CUBLAS_OP_N;
  CALIB_CUBLAS(cublasGemmEx(h_.get(), ta, tb, int(n_), int(m_), int(k_), &alpha, W, t, int(ld_.b), X, t,
                            int(ld_.a), &beta, Y, t, int(ld_.y), comp, CUBLAS_GEMM_DEFAULT));
}

}  // namespace infraplan::calib

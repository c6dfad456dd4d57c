#pragma once
// cuBLASLt GEMMs in the layouts transformer layers use (calib_kernels/gemm_layout.hpp): by default
// the forward Y[M,N] = X[M,K] · W[N,K]ᵀ, row-major, i.e. cuBLAS column-major "TN" with m' = N,
// n' = M (the layout fp8 and int8 require on Hopper); NN and NT for the backward GEMMs.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "calib_kernels/gemm_layout.hpp"
#include "calib_kernels/kernels.hpp"

namespace infraplan::calib {

/// GEMM formats of the sweeps. Inputs / output / accumulation:
/// bf16: bf16/bf16/fp32; fp16: fp16/fp16/fp32; tf32: fp32/fp32/tf32 tensor cores;
/// fp8: e4m3/bf16/fp32; int8: int8/int32/int32.
enum class GemmDtype { BF16, FP16, TF32, FP8, INT8 };
const char* gemm_dtype_name(GemmDtype d);
/// Bytes of one input element / one output element.
double gemm_in_bytes(GemmDtype d);
double gemm_out_bytes(GemmDtype d);
/// Fills `elements` operand elements of format `d` with deterministic random values from `seed`
/// (scale 1, int8 8; never zeros only), as every GEMM measurement and check does: uniform by
/// default, normal as a framework's torch.randn operands (`infraplan-calibrate layouts --fill`).
void fill_gemm_operand(void* p, std::size_t elements, GemmDtype d, std::uint64_t seed, cudaStream_t stream,
                       FillDistribution dist = FillDistribution::Uniform);
/// Leading dimension used for a row of `cols` input elements: cols for bf16/fp16/tf32 (what a
/// framework passes), rounded up to 16 for fp8/int8 (which need 16-byte aligned rows).
std::int64_t gemm_ld(GemmDtype d, std::int64_t cols);

void cublas_check(cublasStatus_t s, const char* call, const char* file, int line);
#define CALIB_CUBLAS(call) ::infraplan::calib::cublas_check((call), #call, __FILE__, __LINE__)

class LtHandle;

/// One planned GEMM shape: descriptors and the heuristic's first algorithm, made once.
class LtPlan {
 public:
  /// `algo_index` picks among the heuristic's ranked answers (0 = its first choice).
  LtPlan(const LtHandle& h, GemmDtype d, std::int64_t m, std::int64_t n, std::int64_t k, int algo_index = 0)
      : LtPlan(h, d, m, n, k, GemmLayout::TN, algo_index) {}
  /// The same in operand layout `layout` (leading dimensions: layout_ld with rows padded to 16
  /// elements for fp8 / int8).
  LtPlan(const LtHandle& h, GemmDtype d, std::int64_t m, std::int64_t n, std::int64_t k, GemmLayout layout,
         int algo_index = 0);
  ~LtPlan();
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  /// False when cuBLASLt offers no algorithm for this shape and format.
  bool ok() const { return ok_; }
  /// Enqueues the GEMM: TN Y = X·Wᵀ (X: [m][ld(k)], W: [n][ld(k)], Y: [m][ldy]); NN Y = X·W
  /// (X: [m][k], W: [k][n]); NT Y = Xᵀ·W (X: [k][m], W: [k][n]).
  void run(const void* X, const void* W, void* Y, cudaStream_t stream) const;
  std::int64_t ldy() const { return ldy_; }
  GemmLayout layout() const { return layout_; }
  /// The chosen algorithm's configuration, e.g. "a21 t18 s25 k1 r0 w0 c0 i0 g2": algorithm id,
  /// tile, stages, split-k, reduction scheme, CTA swizzling, custom option, inner shape, cluster
  /// shape (cuBLASLt's enum values; "?" where cuBLASLt does not answer). Empty when !ok().
  std::string algo_signature() const;

 private:
  const LtHandle& h_;
  GemmDtype d_;
  GemmLayout layout_ = GemmLayout::TN;
  bool ok_ = false;
  std::int64_t ldy_ = 0;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

/// A cuBLASLt handle with its workspace.
class LtHandle {
 public:
  explicit LtHandle(std::size_t workspace_bytes = std::size_t(64) << 20);
  ~LtHandle();
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
  cublasLtHandle_t get() const { return h_; }
  void* workspace() const { return ws_; }
  std::size_t workspace_bytes() const { return ws_bytes_; }

 private:
  cublasLtHandle_t h_ = nullptr;
  void* ws_ = nullptr;
  std::size_t ws_bytes_ = 0;
};

}  // namespace infraplan::calib

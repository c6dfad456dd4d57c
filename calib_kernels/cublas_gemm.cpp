#include "calib_kernels/cublas_gemm.hpp"

#include <vector>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"

namespace infraplan::calib {

const char* gemm_dtype_name(GemmDtype d) {
  switch (d) {
    case GemmDtype::BF16:
      return "bf16";
    case GemmDtype::FP16:
      return "fp16";
    case GemmDtype::TF32:
      return "tf32";
    case GemmDtype::FP8:
      return "fp8";
    case GemmDtype::INT8:
      return "int8";
  }
  return "?";
}

double gemm_in_bytes(GemmDtype d) {
  switch (d) {
    case GemmDtype::BF16:
    case GemmDtype::FP16:
      return 2;
    case GemmDtype::TF32:
      return 4;
    case GemmDtype::FP8:
    case GemmDtype::INT8:
      return 1;
  }
  return 0;
}

double gemm_out_bytes(GemmDtype d) {
  switch (d) {
    case GemmDtype::BF16:
    case GemmDtype::FP16:
    case GemmDtype::FP8:
      return 2;
    case GemmDtype::TF32:
    case GemmDtype::INT8:
      return 4;
  }
  return 0;
}

std::int64_t gemm_ld(GemmDtype d, std::int64_t cols) {
  if (d == GemmDtype::FP8 || d == GemmDtype::INT8) return (cols + 15) / 16 * 16;
  return cols;
}

void cublas_check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw CudaError(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                    ": cuBLAS status " + std::to_string(int(s)));
}

LtHandle::LtHandle(std::size_t workspace_bytes) : ws_bytes_(workspace_bytes) {
  CALIB_CUBLAS(cublasLtCreate(&h_));
  CALIB_CUDA(cudaMalloc(&ws_, ws_bytes_));
}

LtHandle::~LtHandle() {
  if (ws_) cudaFree(ws_);
  if (h_) cublasLtDestroy(h_);
}

LtPlan::LtPlan(const LtHandle& h, GemmDtype d, std::int64_t m, std::int64_t n, std::int64_t k, GemmLayout layout,
               int algo_index)
    : h_(h), d_(d), layout_(layout) {
  cudaDataType_t in_t = CUDA_R_16BF, out_t = CUDA_R_16BF, scale_t = CUDA_R_32F;
  cublasComputeType_t comp = CUBLAS_COMPUTE_32F;
  switch (d) {
    case GemmDtype::BF16:
      break;
    case GemmDtype::FP16:
      in_t = out_t = CUDA_R_16F;
      break;
    case GemmDtype::TF32:
      in_t = out_t = CUDA_R_32F;
      comp = CUBLAS_COMPUTE_32F_FAST_TF32;
      break;
    case GemmDtype::FP8:
      in_t = CUDA_R_8F_E4M3;
      break;
    case GemmDtype::INT8:
      in_t = CUDA_R_8I;
      out_t = CUDA_R_32I;
      scale_t = CUDA_R_32I;
      comp = CUBLAS_COMPUTE_32I;
      break;
  }
  const LayoutLd ld = layout_ld(layout, m, n, k, gemm_ld(d, 1));
  ldy_ = ld.y;
  // Column-major view: C'[n][m] (ldc = ldy) = op(A')·op(B') with A' = W and B' = X:
  //   TN: A' = W (k×n, ld ≥ k) transposed, B' = X (k×m);
  //   NN: A' = W (n×k, ld n),              B' = X (k×m);
  //   NT: A' = W (n×k, ld n),              B' = X (m×k, ld m) transposed.
  CALIB_CUBLAS(cublasLtMatmulDescCreate(&op_, comp, scale_t));
  cublasOperation_t ta = layout == GemmLayout::TN ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t tb = layout == GemmLayout::NT ? CUBLAS_OP_T : CUBLAS_OP_N;
  CALIB_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  CALIB_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  const auto u = [](std::int64_t x) { return std::uint64_t(x); };
  if (layout == GemmLayout::TN)
    CALIB_CUBLAS(cublasLtMatrixLayoutCreate(&a_, in_t, u(k), u(n), ld.b));
  else
    CALIB_CUBLAS(cublasLtMatrixLayoutCreate(&a_, in_t, u(n), u(k), ld.b));
  if (layout == GemmLayout::NT)
    CALIB_CUBLAS(cublasLtMatrixLayoutCreate(&b_, in_t, u(m), u(k), ld.a));
  else
    CALIB_CUBLAS(cublasLtMatrixLayoutCreate(&b_, in_t, u(k), u(m), ld.a));
  CALIB_CUBLAS(cublasLtMatrixLayoutCreate(&c_, out_t, u(n), u(m), ldy_));
  cublasLtMatmulPreference_t pref = nullptr;
  CALIB_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  std::size_t ws = h.workspace_bytes();
  CALIB_CUBLAS(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  std::vector<cublasLtMatmulHeuristicResult_t> res(std::size_t(algo_index) + 1);
  int found = 0;
  cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(h.get(), op_, a_, b_, c_, c_, pref, algo_index + 1, res.data(), &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st == CUBLAS_STATUS_SUCCESS && found > algo_index) {
    algo_ = res[std::size_t(algo_index)].algo;
    ok_ = true;
  }
}

std::string LtPlan::algo_signature() const {
  if (!ok_) return "";
  struct Field {
    char tag;
    cublasLtMatmulAlgoConfigAttributes_t attr;
    std::size_t bytes;
  };
  const Field fields[] = {{'a', CUBLASLT_ALGO_CONFIG_ID, 4},
                          {'t', CUBLASLT_ALGO_CONFIG_TILE_ID, 4},
                          {'s', CUBLASLT_ALGO_CONFIG_STAGES_ID, 4},
                          {'k', CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 4},
                          {'r', CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, 4},
                          {'w', CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, 4},
                          {'c', CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, 4},
                          {'i', CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, 2},
                          {'g', CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, 2}};
  std::string out;
  for (const Field& f : fields) {
    std::uint32_t v32 = 0;
    std::uint16_t v16 = 0;
    void* dst = f.bytes == 2 ? static_cast<void*>(&v16) : static_cast<void*>(&v32);
    std::size_t written = 0;
    cublasStatus_t st = cublasLtMatmulAlgoConfigGetAttribute(&algo_, f.attr, dst, f.bytes, &written);
    if (!out.empty()) out += ' ';
    out += f.tag;
    if (st == CUBLAS_STATUS_SUCCESS)
      out += std::to_string(f.bytes == 2 ? std::uint32_t(v16) : v32);
    else
      out += '?';
  }
  return out;
}

LtPlan::~LtPlan() {
  if (c_) cublasLtMatrixLayoutDestroy(c_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (op_) cublasLtMatmulDescDestroy(op_);
}

void LtPlan::run(const void* X, const void* W, void* Y, cudaStream_t stream) const {
  float alpha_f = 1.f, beta_f = 0.f;
  std::int32_t alpha_i = 1, beta_i = 0;
  const void* alpha = d_ == GemmDtype::INT8 ? static_cast<const void*>(&alpha_i) : &alpha_f;
  const void* beta = d_ == GemmDtype::INT8 ? static_cast<const void*>(&beta_i) : &beta_f;
  CALIB_CUBLAS(cublasLtMatmul(h_.get(), op_, alpha, W, a_, X, b_, beta, Y, c_, Y, c_, &algo_, h_.workspace(),
                              h_.workspace_bytes(), stream));
}

void fill_gemm_operand(void* p, std::size_t elements, GemmDtype d, std::uint64_t seed, cudaStream_t stream,
                       FillDistribution dist) {
  const Elem e = d == GemmDtype::BF16   ? Elem::BF16
                 : d == GemmDtype::FP16 ? Elem::F16
                 : d == GemmDtype::TF32 ? Elem::F32
                 : d == GemmDtype::FP8  ? Elem::FP8E4M3
                                        : Elem::INT8;
  fill_random(p, elements, e, seed, d == GemmDtype::INT8 ? 8.f : 1.f, stream, dist);
}

}  // namespace infraplan::calib

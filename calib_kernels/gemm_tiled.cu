// Shared-memory tiled GEMM on CUDA cores: C[M,N] = A[M,K]·B[N,K]ᵀ, bf16 in/out, fp32 accumulation.
// 128×128 block tile, k-step 8, 256 threads each computing an 8×8 sub-tile from registers.
#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"

namespace infraplan::calib {
namespace {

constexpr int BM = 128, BN = 128, BK = 8;

__global__ void __launch_bounds__(256) gemm_tiled_k(const bf16* __restrict__ A, const bf16* __restrict__ B,
                                                    bf16* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(16) float As[BK][BM];
  __shared__ __align__(16) float Bs[BK][BN];
  int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  float acc[8][8] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    // 128 rows × 8 k of A and of B: 4 elements per thread each.
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      int e = tid + i * 256, r = e / BK, kk = e % BK;
      int gk = k0 + kk;
      As[kk][r] = (bm + r < M && gk < K) ? __bfloat162float(A[std::size_t(bm + r) * K + gk]) : 0.f;
      Bs[kk][r] = (bn + r < N && gk < K) ? __bfloat162float(B[std::size_t(bn + r) * K + gk]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[8], b[8];
      *reinterpret_cast<float4*>(a) = *reinterpret_cast<const float4*>(&As[kk][ty * 4]);
      *reinterpret_cast<float4*>(a + 4) = *reinterpret_cast<const float4*>(&As[kk][64 + ty * 4]);
      *reinterpret_cast<float4*>(b) = *reinterpret_cast<const float4*>(&Bs[kk][tx * 4]);
      *reinterpret_cast<float4*>(b + 4) = *reinterpret_cast<const float4*>(&Bs[kk][64 + tx * 4]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    int r = bm + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
    if (r >= M) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      int c = bn + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
      if (c < N) C[std::size_t(r) * N + c] = __float2bfloat16(acc[i][j]);
    }
  }
}

}  // namespace

void gemm_tiled(const bf16* A, const bf16* B, bf16* C, int M, int N, int K, cudaStream_t stream) {
  dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
  gemm_tiled_k<<<grid, 256, 0, stream>>>(A, B, C, M, N, K);
  CALIB_LAUNCH();
}

}  // namespace infraplan::calib

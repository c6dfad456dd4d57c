// Tensor-core GEMM: C[M,N] = A[M,K]·B[N,K]ᵀ (bf16, fp32 accumulation) with mma.sync m16n8k16,
// ldmatrix from XOR-swizzled shared memory and a cp.async multi-stage pipeline. K % 8 == 0.
#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"
#include "calib_kernels/mma_util.cuh"

namespace infraplan::calib {
namespace {

constexpr int BK = 32;  // 64-byte rows: four 16-byte chunks, swizzled by (row / 2) % 4

__device__ __forceinline__ int swz(int row, int chunk) { return row * BK + ((chunk ^ ((row >> 1) & 3)) * 8); }

template <int BM, int BN, int WARPS_M, int WARPS_N, int STAGES>
__global__ void __launch_bounds__(WARPS_M* WARPS_N * 32)
    gemm_mma_k(const bf16* __restrict__ A, const bf16* __restrict__ B, bf16* __restrict__ C, int M, int N,
               int K) {
  constexpr int THREADS = WARPS_M * WARPS_N * 32;
  constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N, MT = WM / 16, NT = WN / 8;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  bf16* sA = reinterpret_cast<bf16*>(smem_raw);
  bf16* sB = sA + STAGES * BM * BK;
  int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  int wm = warp / WARPS_N, wn = warp % WARPS_N;
  int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  int ktiles = (K + BK - 1) / BK;

  auto load = [&](int stage, int kt) {
    int k0 = kt * BK;
    bf16* a = sA + stage * BM * BK;
    bf16* b = sB + stage * BN * BK;
#pragma unroll
    for (int e = tid; e < BM * 4; e += THREADS) {
      int r = e / 4, c = e % 4, gr = bm + r, gk = k0 + c * 8;
      bool ok = gr < M && gk < K && kt < ktiles;
      cp_async16(smem_u32(a + swz(r, c)), ok ? A + std::size_t(gr) * K + gk : A, ok);
    }
#pragma unroll
    for (int e = tid; e < BN * 4; e += THREADS) {
      int r = e / 4, c = e % 4, gr = bn + r, gk = k0 + c * 8;
      bool ok = gr < N && gk < K && kt < ktiles;
      cp_async16(smem_u32(b + swz(r, c)), ok ? B + std::size_t(gr) * K + gk : B, ok);
    }
  };

  float acc[MT][NT][4] = {};
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    load(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    load((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
    cp_async_commit();
    const bf16* a = sA + (kt % STAGES) * BM * BK;
    const bf16* b = sB + (kt % STAGES) * BN * BK;
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
      std::uint32_t af[MT][4], bfr[NT][2];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        int r = wm * WM + mt * 16 + (lane % 16);
        ldmatrix_x4(af[mt], smem_u32(a + swz(r, ks * 2 + lane / 16)));
      }
#pragma unroll
      for (int nt = 0; nt < NT; nt += 2) {
        int r = wn * WN + nt * 8 + (lane % 8) + (lane / 16) * 8;
        std::uint32_t t[4];
        ldmatrix_x4(t, smem_u32(b + swz(r, ks * 2 + (lane / 8) % 2)));
        bfr[nt][0] = t[0];
        bfr[nt][1] = t[1];
        bfr[nt + 1][0] = t[2];
        bfr[nt + 1][1] = t[3];
      }
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) mma_bf16(acc[mt][nt], af[mt], bfr[nt]);
    }
  }
  cp_async_wait<0>();
  bool even_n = (N % 2) == 0;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        int r = bm + wm * WM + mt * 16 + lane / 4 + h * 8;
        int c = bn + wn * WN + nt * 8 + (lane % 4) * 2;
        if (r >= M) continue;
        float v0 = acc[mt][nt][2 * h], v1 = acc[mt][nt][2 * h + 1];
        bf16* dst = C + std::size_t(r) * N + c;
        if (even_n && c + 1 < N) {
          *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(v0, v1);
        } else {
          if (c < N) dst[0] = __float2bfloat16(v0);
          if (c + 1 < N) dst[1] = __float2bfloat16(v1);
        }
      }
}

template <int BM, int BN, int WARPS_M, int WARPS_N, int STAGES>
void launch(const bf16* A, const bf16* B, bf16* C, int M, int N, int K, cudaStream_t stream) {
  auto kern = gemm_mma_k<BM, BN, WARPS_M, WARPS_N, STAGES>;
  int smem = STAGES * (BM + BN) * BK * int(sizeof(bf16));
  CALIB_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
  kern<<<grid, WARPS_M * WARPS_N * 32, smem, stream>>>(A, B, C, M, N, K);
  CALIB_LAUNCH();
}

}  // namespace

void gemm_mma(const bf16* A, const bf16* B, bf16* C, int M, int N, int K, cudaStream_t stream) {
  if (K % 8 != 0) throw CudaError("gemm_mma: K must be a multiple of 8");
  int dev = 0, sms = 0;
  CALIB_CUDA(cudaGetDevice(&dev));
  CALIB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  long big = long((M + 127) / 128) * ((N + 255) / 256);
  long mid = long((M + 127) / 128) * ((N + 127) / 128);
  if (big >= sms)
    launch<128, 256, 2, 4, 4>(A, B, C, M, N, K, stream);
  else if (mid >= sms)
    launch<128, 128, 2, 2, 4>(A, B, C, M, N, K, stream);
  else
    launch<64, 128, 2, 2, 4>(A, B, C, M, N, K, stream);
}

}  // namespace infraplan::calib

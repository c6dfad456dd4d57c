// Hopper tensor-core GEMM: C[M,N] = A[M,K]·B[N,K]ᵀ (bf16, fp32 accumulation) with wgmma.mma_async.
// Both operands are K-major, which is wgmma's native shared-memory layout (no transpose). The copy
// engine (TMA) loads BM×64 and BN×64 tiles with the 128-byte swizzle into a ring of STAGES shared
// buffers guarded by mbarriers ("full": bytes landed, "empty": every consumer is done with the
// slot). Warp specialisation: warpgroup 0 is the producer (one thread issues the TMA copies; the
// warpgroup gives most of its registers back with setmaxnreg), warpgroups 1..BM/64 are consumers,
// each owning 64 rows × BN columns of the CTA tile in registers (m64nBNk16 instructions, at most
// 128 accumulators per thread). Tiles are walked in groups of GROUP_M tile rows so that the CTAs
// in flight share A and B panels in L2; a persistent grid (one CTA per SM looping over tiles) lets
// the producer fill the next tile's stages while the consumers write the previous one out.
// A 2-CTA cluster variant that multicast each B tile to both CTAs was measured slower on the H200
// (57% of cuBLASLt at 4096³ against 82% without clusters, both one tile per CTA) and dropped.
// Preconditions: K % 8 == 0 and A, B 16-byte aligned (TMA's global-stride and address rules).
#include <cuda.h>  // CUtensorMap and its enums only; the encoder comes through the runtime (no -lcuda)
#include <cudaTypedefs.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>
#include <string>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/hopper_util.cuh"
#include "calib_kernels/kernels.hpp"
#include "calib_kernels/mma_util.cuh"

namespace infraplan::calib {
namespace {

using namespace hopper;

constexpr int BK = 64;       // one 128-byte swizzle row of bf16 per tile row
constexpr int GROUP_M = 16;  // tile rows per group of the tile order
constexpr int PRODUCER_REGS = 40;

template <int BM, int BN, int STAGES, int MIN_BLOCKS>
struct Config {
  static constexpr int CONSUMERS = BM / 64;
  static constexpr int THREADS = 128 * (CONSUMERS + 1);
  static constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2, STAGE_BYTES = A_BYTES + B_BYTES;
  // Tiles need 1024-byte alignment (the swizzle pattern repeats every 8 rows of 128 bytes);
  // dynamic shared memory is only 16-byte aligned, hence the slack.
  static constexpr int SMEM = STAGES * STAGE_BYTES + 1024;
  // The compiler's per-thread register cap from __launch_bounds__(THREADS, MIN_BLOCKS); the CTA
  // holds cap × THREADS registers, which setmaxnreg redistributes from producer to consumers.
  static constexpr int CAP = (65536 / (MIN_BLOCKS * THREADS)) & ~7;
  static constexpr int CONSUMER_REGS_RAW = ((CAP * THREADS - 128 * PRODUCER_REGS) / (128 * CONSUMERS)) & ~7;
  static constexpr int CONSUMER_REGS = CONSUMER_REGS_RAW > 240 ? 240 : CONSUMER_REGS_RAW;
  static_assert(BM % 64 == 0 && CONSUMERS >= 1 && CONSUMERS <= 2);
  static_assert(BN == 64 || BN == 128 || BN == 256);
  static_assert(CAP <= 248, "setmaxnreg needs a register cap below the hardware maximum");
  static_assert(CONSUMER_REGS >= CAP && CONSUMER_REGS - (BN / 2) >= 64, "too few consumer registers");
  static_assert(MIN_BLOCKS * SMEM <= 227 * 1024, "shared memory per SM");
};

__device__ __forceinline__ void tile_coords(int tile, int tiles_m, int tiles_n, int& tm, int& tn) {
  int per_group = GROUP_M * tiles_n;
  int first_m = (tile / per_group) * GROUP_M;
  int rows = min(tiles_m - first_m, GROUP_M);
  int in_group = tile % per_group;
  tm = first_m + in_group % rows;
  tn = in_group / rows;
}

template <int BM, int BN, int STAGES, int MIN_BLOCKS>
__global__ void __launch_bounds__(Config<BM, BN, STAGES, MIN_BLOCKS>::THREADS, MIN_BLOCKS)
    gemm_wgmma_k(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                 bf16* __restrict__ C, int M, int N, int K, int tiles_m, int tiles_n, bool pairs) {
  using Cfg = Config<BM, BN, STAGES, MIN_BLOCKS>;
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) std::uint64_t full[STAGES], empty[STAGES];
  const std::uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int ktiles = (K + BK - 1) / BK, ntiles = tiles_m * tiles_n;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), Cfg::CONSUMERS);
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (wg == 0) {
    setmaxnreg_dec<PRODUCER_REGS>();
    if (t != 0) return;
    int s = 0;
    std::uint32_t phase = 0;
    for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
      int tm, tn;
      tile_coords(tile, tiles_m, tiles_n, tm, tn);
      for (int kt = 0; kt < ktiles; ++kt) {
        // Parity phase ^ 1 passes at once on the first lap: the slots start empty.
        mbar_wait(smem_u32(&empty[s]), phase ^ 1);
        std::uint32_t bar = smem_u32(&full[s]), a = base + s * Cfg::STAGE_BYTES;
        // The transaction count is the whole box even where it is zero-filled past the edges.
        mbar_arrive_expect_tx(bar, Cfg::STAGE_BYTES);
        tma_load_2d(a, &tmA, kt * BK, tm * BM, bar);
        tma_load_2d(a + Cfg::A_BYTES, &tmB, kt * BK, tn * BN, bar);
        if (++s == STAGES) {
          s = 0;
          phase ^= 1;
        }
      }
    }
    return;
  }

  setmaxnreg_inc<Cfg::CONSUMER_REGS>();
  const int c = wg - 1;
  float acc[BN / 2];
  int s = 0;
  std::uint32_t phase = 0;
  for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    int tm, tn;
    tile_coords(tile, tiles_m, tiles_n, tm, tn);
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
    fence_regs(acc);
    int prev = -1;
    for (int kt = 0; kt < ktiles; ++kt) {
      mbar_wait(smem_u32(&full[s]), phase);
      std::uint32_t a = base + s * Cfg::STAGE_BYTES + c * 64 * BK * 2;
      std::uint64_t da = smem_desc_sw128(a), db = smem_desc_sw128(base + s * Cfg::STAGE_BYTES + Cfg::A_BYTES);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) wgmma_bf16<BN>(acc, da + 2 * kk, db + 2 * kk);
      wgmma_commit();
      // Keep this stage's group in flight; the previous one is finished, so its slot is free.
      wgmma_wait<1>();
      if (prev >= 0 && t == 0) mbar_arrive(smem_u32(&empty[prev]));
      prev = s;
      if (++s == STAGES) {
        s = 0;
        phase ^= 1;
      }
    }
    wgmma_wait<0>();
    fence_regs(acc);
    if (prev >= 0 && t == 0) mbar_arrive(smem_u32(&empty[prev]));

    // Epilogue straight from the fragment layout: each thread holds column pairs.
    const int warp = t / 32, lane = t % 32;
    const int row0 = tm * BM + c * 64 + warp * 16 + lane / 4, col0 = tn * BN + (lane % 4) * 2;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        int r = row0 + 8 * h, col = col0 + 8 * j;
        if (r >= M) continue;
        float v0 = acc[j * 4 + h * 2], v1 = acc[j * 4 + h * 2 + 1];
        bf16* dst = C + std::size_t(r) * N + col;
        if (pairs && col + 1 < N) {
          *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(v0, v1);
        } else {
          if (col < N) dst[0] = __float2bfloat16(v0);
          if (col + 1 < N) dst[1] = __float2bfloat16(v1);
        }
      }
  }
}

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    CALIB_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !p)
      throw CudaError("gemm_wgmma: cuTensorMapEncodeTiled not found");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

/// Row-major rows × K bf16 matrix, box of box_rows × 64 with the 128-byte swizzle.
CUtensorMap tensor_map(const bf16* p, int rows, int K, int box_rows) {
  CUtensorMap m;
  cuuint64_t dims[2] = {cuuint64_t(K), cuuint64_t(rows)};
  cuuint64_t strides[1] = {cuuint64_t(K) * sizeof(bf16)};
  cuuint32_t box[2] = {BK, cuuint32_t(box_rows)};
  cuuint32_t elem_strides[2] = {1, 1};
  CUresult r =
      tensor_map_encoder()(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<bf16*>(p), dims, strides, box,
                           elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw CudaError("gemm_wgmma: cuTensorMapEncodeTiled failed (" + std::to_string(r) + ")");
  return m;
}

template <int BM, int BN, int STAGES, int MIN_BLOCKS>
void launch(const bf16* A, const bf16* B, bf16* C, int M, int N, int K, bool persistent, int dev, int sms,
            cudaStream_t stream) {
  using Cfg = Config<BM, BN, STAGES, MIN_BLOCKS>;
  auto kern = gemm_wgmma_k<BM, BN, STAGES, MIN_BLOCKS>;
  // The dynamic shared-memory limit is raised once per device: a call per launch would add host
  // time to launches of a few microseconds.
  static std::array<std::once_flag, 64> once;
  std::call_once(once.at(dev), [&] {
    CALIB_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::SMEM));
  });
  int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, tiles = tiles_m * tiles_n;
  int grid = persistent ? std::min(tiles, sms * MIN_BLOCKS) : tiles;
  bool pairs = N % 2 == 0 && reinterpret_cast<std::uintptr_t>(C) % 4 == 0;
  kern<<<grid, Cfg::THREADS, Cfg::SMEM, stream>>>(tensor_map(A, M, K, BM), tensor_map(B, N, K, BN), C, M, N,
                                                  K, tiles_m, tiles_n, pairs);
  CALIB_LAUNCH();
}

struct TileConfig {
  const char* name;
  void (*run)(const bf16*, const bf16*, bf16*, int, int, int, bool, int, int, cudaStream_t);
  bool persistent;
};

constexpr TileConfig kConfigs[] = {
    {"128x256 persistent", launch<128, 256, 4, 1>, true},
    {"128x256", launch<128, 256, 4, 1>, false},
    {"128x128 persistent", launch<128, 128, 6, 1>, true},
    {"128x128", launch<128, 128, 6, 1>, false},
    {"128x64", launch<128, 64, 8, 1>, false},
    {"64x128 2/SM", launch<64, 128, 4, 2>, false},
    {"64x128 2/SM persistent", launch<64, 128, 4, 2>, true},
};
constexpr int kNumConfigs = int(sizeof(kConfigs) / sizeof(kConfigs[0]));

void run_config(int config, const bf16* A, const bf16* B, bf16* C, int M, int N, int K, cudaStream_t stream) {
  if (config < 0 || config >= kNumConfigs)
    throw CudaError("gemm_wgmma: no tile configuration " + std::to_string(config));
  if (K % 8 != 0) throw CudaError("gemm_wgmma: K must be a multiple of 8");
  if (reinterpret_cast<std::uintptr_t>(A) % 16 != 0 || reinterpret_cast<std::uintptr_t>(B) % 16 != 0)
    throw CudaError("gemm_wgmma: A and B must be 16-byte aligned");
  if (M <= 0 || N <= 0) return;
  if (K == 0) {
    CALIB_CUDA(cudaMemsetAsync(C, 0, std::size_t(M) * N * sizeof(bf16), stream));
    return;
  }
  int dev = 0, sms = 0;
  CALIB_CUDA(cudaGetDevice(&dev));
  CALIB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const TileConfig& cfg = kConfigs[config];
  cfg.run(A, B, C, M, N, K, cfg.persistent, dev, sms, stream);
}

}  // namespace

int gemm_wgmma_config_count() { return kNumConfigs; }

const char* gemm_wgmma_config_name(int config) {
  return config >= 0 && config < kNumConfigs ? kConfigs[config].name : "";
}

void gemm_wgmma_config(int config, const bf16* A, const bf16* B, bf16* C, int M, int N, int K,
                       cudaStream_t stream) {
  run_config(config, A, B, C, M, N, K, stream);
}

// Measured on the H200 (docs/calibration.md): 128×256 persistent is best once there are two
// waves of such tiles (4096³, 8192³); 128×128 persistent when 128×128 tiles still fill the GPU
// (2048³); below that, small tiles at two CTAs per SM give the most CTAs and the shortest k-loop
// latency (1024³: 64×128 and 128×64 within noise, 128×256 at about twice the time).
void gemm_wgmma(const bf16* A, const bf16* B, bf16* C, int M, int N, int K, cudaStream_t stream) {
  int dev = 0, sms = 0;
  CALIB_CUDA(cudaGetDevice(&dev));
  CALIB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  long big = long((M + 127) / 128) * ((N + 255) / 256);
  long mid = long((M + 127) / 128) * ((N + 127) / 128);
  run_config(big >= 2 * sms ? 0 : mid >= sms ? 2 : 5, A, B, C, M, N, K, stream);
}

}  // namespace infraplan::calib

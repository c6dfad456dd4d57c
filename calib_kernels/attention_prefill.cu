// FlashAttention-2-style forward (bf16, head_dim 64/128, causal or not, variable lengths, GQA).
// One CTA = 128 query rows of one head of one sequence, 4 warps × 32 rows; K/V tiles of 64 keys
// double-buffered through cp.async into XOR-swizzled shared memory, read by ldmatrix (.trans for
// V); QKᵀ and PV on mma.sync m16n8k16; online softmax in registers (exp2 with the scale folded
// in); P goes from accumulators to A fragments without shared memory. Causal: only tiles that
// cross a warp's diagonal are masked, tiles wholly above it are skipped.
#include <cfloat>
#include <cmath>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"
#include "calib_kernels/flash_tile.cuh"
#include "calib_kernels/mma_util.cuh"

namespace infraplan::calib {
namespace {

using flash::LdOffsets;
using flash::MT;
using flash::pv_step;
using flash::qk_step;
using flash::softmax_step;
using flash::sw;

// ROWS rows of a [tokens][heads][D] tensor from row0 into swizzled shared memory; rows past
// rows_valid are zero-filled.
template <int D, int ROWS, int THREADS>
__device__ __forceinline__ void load_tile(bf16* s, const bf16* g, int row0, int rows_valid, int stride,
                                          int tid) {
  constexpr int CH = D / 8;
#pragma unroll
  for (int e = tid; e < ROWS * CH; e += THREADS) {
    int r = e / CH, c = e % CH;
    bool ok = row0 + r < rows_valid;
    cp_async16(smem_u32(s + sw<D>(r, c)), ok ? g + std::size_t(row0 + r) * stride + c * 8 : g, ok);
  }
}

constexpr int WARPS = 4, BR = WARPS * 16 * MT, BC = 64, SUB = 32, THREADS = WARPS * 32;

// Keys past the sequence end, and (causal) keys after the query, to -inf.
template <bool CAUSAL, int NK>
__device__ __forceinline__ void mask_step(float (&s)[MT][NK / 8][4], int key0, int len, int qrow0, int lane) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NK / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        int key = key0 + nt * 8 + (lane % 4) * 2 + (e & 1);
        int row = qrow0 + mt * 16 + (e >> 1) * 8;
        if (key >= len || (CAUSAL && key > row)) s[mt][nt][e] = -INFINITY;
      }
}

// One CTA = BR = 128 query rows of one head of one sequence, 4 warps × 32 rows (MT = 2 m-tiles
// each, so every K or V fragment a warp loads from shared memory feeds two independent mma.sync;
// Q is reloaded from shared memory per k-step to leave the registers to the accumulators). K/V
// tiles of BC keys are double-buffered through cp.async with one barrier per tile: tile j + 1 is
// requested as tile j starts, and tile j is computed in BC / SUB steps of SUB keys (QKᵀ, softmax,
// PV), which halves the live scores (causal d128: 249 registers, no spills; SUB = BC spilled and
// measured up to 10% slower at S ≤ 512 on H200, equal within 1% at S ≥ 4096).
template <int D, bool CAUSAL>
__global__ void __launch_bounds__(THREADS, 2)
    fa2_fwd_k(const bf16* __restrict__ q, const bf16* __restrict__ k, const bf16* __restrict__ v,
              bf16* __restrict__ o, const int* __restrict__ cu_seqlens, int heads, int kv_heads,
              float scale_log2) {
  constexpr int RB = D * 2;  // bytes per row
  extern __shared__ __align__(128) unsigned char smem_raw[];
  bf16* sQ = reinterpret_cast<bf16*>(smem_raw);
  bf16* sK = sQ + BR * D;      // 2 stages
  bf16* sV = sK + 2 * BC * D;  // 2 stages
  // grid = (heads, seqs, query blocks): the block index varies slowest, so the scheduler starts the
  // heaviest (causal: last) query blocks of every head and sequence first, and the heads that share
  // a KV head run side by side (their K/V tiles hit in L2).
  int h = blockIdx.x, seq = blockIdx.y;
  int start = cu_seqlens[seq], len = cu_seqlens[seq + 1] - start;
  int m_block = int(gridDim.z) - 1 - int(blockIdx.z);
  if (m_block * BR >= len) return;
  int kvh = h / (heads / kv_heads);
  int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const bf16* qg = q + (std::size_t(start) * heads + h) * D;
  const bf16* kg = k + (std::size_t(start) * kv_heads + kvh) * D;
  const bf16* vg = v + (std::size_t(start) * kv_heads + kvh) * D;
  int qstride = heads * D, kvstride = kv_heads * D;

  int kv_end = CAUSAL ? min(len, (m_block + 1) * BR) : len;
  int n_tiles = (kv_end + BC - 1) / BC;

  float acc[MT][D / 8][4] = {};
  float m_r[MT][2], l_r[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      m_r[mt][r] = -FLT_MAX;
      l_r[mt][r] = 0.f;
    }
  int wrow0 = warp * 16 * MT;                   // first row of this warp in the block
  int qrow0 = m_block * BR + wrow0 + lane / 4;  // this thread's rows: qrow0 + 16 mt + {0, 8}
  int wfirst = m_block * BR + wrow0, wlast = wfirst + 16 * MT - 1;
  int l8 = lane & 7;
  std::uint32_t sQa = smem_u32(sQ), sKa = smem_u32(sK), sVa = smem_u32(sV);
  LdOffsets off{std::uint32_t((wrow0 + (lane & 15)) * RB + (((lane >> 4) ^ l8) << 4)),
                std::uint32_t((l8 + ((lane >> 4) << 3)) * RB + ((((lane >> 3) & 1) ^ l8) << 4)),
                std::uint32_t((l8 + (((lane >> 3) & 1) << 3)) * RB + (((lane >> 4) ^ l8) << 4))};

  load_tile<D, BR, THREADS>(sQ, qg, m_block * BR, len, qstride, tid);
  load_tile<D, BC, THREADS>(sK, kg, 0, len, kvstride, tid);
  load_tile<D, BC, THREADS>(sV, vg, 0, len, kvstride, tid);
  cp_async_commit();
  for (int j = 0; j < n_tiles; ++j) {
    cp_async_wait<0>();
    __syncthreads();  // tile j visible; the other buffers (tile j - 1) are free
    if (j + 1 < n_tiles) {
      load_tile<D, BC, THREADS>(sK + ((j + 1) & 1) * BC * D, kg, (j + 1) * BC, len, kvstride, tid);
      load_tile<D, BC, THREADS>(sV + ((j + 1) & 1) * BC * D, vg, (j + 1) * BC, len, kvstride, tid);
    }
    cp_async_commit();
#pragma unroll
    for (int hs = 0; hs < BC / SUB; ++hs) {
      int key0 = j * BC + hs * SUB;
      if (CAUSAL && key0 > wlast) continue;  // warp-uniform
      float s[MT][SUB / 8][4];
      qk_step<D, SUB>(s, sQa, sKa + (j & 1) * BC * RB + hs * SUB * RB, off);
      if ((key0 + SUB > len) || (CAUSAL && key0 + SUB - 1 > wfirst))
        mask_step<CAUSAL, SUB>(s, key0, len, qrow0, lane);
      softmax_step<D, SUB>(s, m_r, l_r, acc, scale_log2);
      pv_step<D, SUB>(acc, s, sVa + (j & 1) * BC * RB + hs * SUB * RB, off);
    }
  }
  // Row sums over the quad, normalise, store.
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float l = l_r[mt][r];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      float inv = l > 0 ? 1.f / l : 0.f;
      int row = qrow0 + mt * 16 + r * 8;
      if (row >= len) continue;
      bf16* dst = o + (std::size_t(start + row) * heads + h) * D;
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt) {
        int c = dt * 8 + (lane % 4) * 2;
        *reinterpret_cast<__nv_bfloat162*>(dst + c) =
            __floats2bfloat162_rn(acc[mt][dt][2 * r] * inv, acc[mt][dt][2 * r + 1] * inv);
      }
    }
}

template <int D, bool CAUSAL>
void launch(const PrefillArgs& a, cudaStream_t stream) {
  auto kern = fa2_fwd_k<D, CAUSAL>;
  int smem = (BR + 4 * BC) * D * int(sizeof(bf16));
  CALIB_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int m_blocks = (a.max_seqlen + BR - 1) / BR;
  if (m_blocks > 65535 || a.num_seqs > 65535) throw CudaError("attention_prefill: too many blocks");
  dim3 grid(a.heads, a.num_seqs, m_blocks);
  float scale_log2 = float(1.0 / std::sqrt(double(D)) * 1.4426950408889634);
  kern<<<grid, THREADS, smem, stream>>>(a.q, a.k, a.v, a.o, a.cu_seqlens, a.heads, a.kv_heads, scale_log2);
  CALIB_LAUNCH();
}

}  // namespace

void attention_prefill(const PrefillArgs& a, cudaStream_t stream) {
  if (a.heads <= 0 || a.kv_heads <= 0 || a.heads % a.kv_heads != 0)
    throw CudaError("attention_prefill: heads must be a positive multiple of kv_heads");
  if (a.head_dim == 128) {
    if (a.causal)
      launch<128, true>(a, stream);
    else
      launch<128, false>(a, stream);
  } else if (a.head_dim == 64) {
    if (a.causal)
      launch<64, true>(a, stream);
    else
      launch<64, false>(a, stream);
  } else {
    throw CudaError("attention_prefill: head_dim must be 64 or 128");
  }
}

}  // namespace infraplan::calib

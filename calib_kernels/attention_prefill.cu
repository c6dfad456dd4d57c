// FlashAttention-2-style forward (bf16, head_dim 64/128, causal or not, variable lengths, GQA).
// One CTA = 64 query rows of one head of one sequence, 4 warps × 16 rows; K/V tiles of 64 keys
// double-buffered through cp.async; QKᵀ and PV on mma.sync m16n8k16; online softmax in registers
// (exp2 with the scale folded in); P goes from accumulators to A fragments without shared memory.
#include <cfloat>
#include <cmath>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"
#include "calib_kernels/mma_util.cuh"

namespace infraplan::calib {
namespace {

constexpr int BR = 64, BC = 64, WARPS = 4;

// Rows of D bf16 (D/8 16-byte chunks) with the chunk index XOR-ed by row % 8.
template <int D>
__device__ __forceinline__ int sw(int row, int chunk) {
  return row * D + ((chunk ^ (row & 7)) * 8);
}

template <int D>
__device__ __forceinline__ void load_tile(bf16* s, const bf16* g, int row0, int rows_valid, int stride,
                                          int tid) {
  constexpr int CH = D / 8;
#pragma unroll
  for (int e = tid; e < BR * CH; e += WARPS * 32) {
    int r = e / CH, c = e % CH;
    bool ok = row0 + r < rows_valid;
    cp_async16(smem_u32(s + sw<D>(r, c)), ok ? g + std::size_t(row0 + r) * stride + c * 8 : g, ok);
  }
}

template <int D, bool CAUSAL>
__global__ void __launch_bounds__(WARPS * 32)
    fa2_fwd_k(const bf16* __restrict__ q, const bf16* __restrict__ k, const bf16* __restrict__ v,
              bf16* __restrict__ o, const int* __restrict__ cu_seqlens, int heads, int kv_heads,
              float scale_log2) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  bf16* sQ = reinterpret_cast<bf16*>(smem_raw);
  bf16* sK = sQ + BR * D;      // 2 stages
  bf16* sV = sK + 2 * BC * D;  // 2 stages
  int seq = blockIdx.z, h = blockIdx.y;
  int start = cu_seqlens[seq], len = cu_seqlens[seq + 1] - start;
  int m_block = int(gridDim.x) - 1 - int(blockIdx.x);  // heaviest (causal) blocks first
  if (m_block * BR >= len) return;
  int kvh = h / (heads / kv_heads);
  int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const bf16* qg = q + (std::size_t(start) * heads + h) * D;
  const bf16* kg = k + (std::size_t(start) * kv_heads + kvh) * D;
  const bf16* vg = v + (std::size_t(start) * kv_heads + kvh) * D;
  int qstride = heads * D, kvstride = kv_heads * D;

  int kv_end = CAUSAL ? min(len, (m_block + 1) * BR) : len;
  int n_tiles = (kv_end + BC - 1) / BC;

  load_tile<D>(sQ, qg, m_block * BR, len, qstride, tid);
  load_tile<D>(sK, kg, 0, len, kvstride, tid);
  cp_async_commit();
  load_tile<D>(sV, vg, 0, len, kvstride, tid);
  cp_async_commit();

  std::uint32_t qf[D / 16][4];
  float acc[D / 8][4] = {};
  float m_r[2] = {-FLT_MAX, -FLT_MAX}, l_r[2] = {0.f, 0.f};
  int qrow0 = m_block * BR + warp * 16 + lane / 4;  // this thread's rows: qrow0, qrow0 + 8

  for (int j = 0; j < n_tiles; ++j) {
    cp_async_wait<1>();
    __syncthreads();
    if (j == 0) {
#pragma unroll
      for (int ks = 0; ks < D / 16; ++ks)
        ldmatrix_x4(qf[ks], smem_u32(sQ + sw<D>(warp * 16 + (lane % 16), ks * 2 + lane / 16)));
    }
    const bf16* kt = sK + (j & 1) * BC * D;
    float s[BC / 8][4] = {};
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
#pragma unroll
      for (int nt = 0; nt < BC / 8; nt += 2) {
        std::uint32_t t[4];
        ldmatrix_x4(t, smem_u32(kt + sw<D>(nt * 8 + (lane % 8) + (lane / 16) * 8, ks * 2 + (lane / 8) % 2)));
        std::uint32_t b0[2] = {t[0], t[1]}, b1[2] = {t[2], t[3]};
        mma_bf16(s[nt], qf[ks], b0);
        mma_bf16(s[nt + 1], qf[ks], b1);
      }
    }
    // Prefetch the next K tile into the other buffer (its previous contents were used last iteration).
    if (j + 1 < n_tiles) load_tile<D>(sK + ((j + 1) & 1) * BC * D, kg, (j + 1) * BC, len, kvstride, tid);
    cp_async_commit();

    // Mask: keys past the sequence end, and (causal) keys after the query.
    bool need_mask = (j * BC + BC > len) || (CAUSAL && j * BC + BC - 1 > m_block * BR);
    if (need_mask) {
#pragma unroll
      for (int nt = 0; nt < BC / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          int key = j * BC + nt * 8 + (lane % 4) * 2 + (e & 1);
          int row = qrow0 + (e >> 1) * 8;
          if (key >= len || (CAUSAL && key > row)) s[nt][e] = -INFINITY;
        }
    }
    // Online softmax over the two rows this thread holds.
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = m_r[r];
#pragma unroll
      for (int nt = 0; nt < BC / 8; ++nt) mx = fmaxf(mx, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      float alpha = exp2f((m_r[r] - mx) * scale_log2);
      float ms = mx * scale_log2;
      float sum = 0;
#pragma unroll
      for (int nt = 0; nt < BC / 8; ++nt) {
        float p0 = exp2f(fmaf(s[nt][2 * r], scale_log2, -ms));
        float p1 = exp2f(fmaf(s[nt][2 * r + 1], scale_log2, -ms));
        s[nt][2 * r] = p0;
        s[nt][2 * r + 1] = p1;
        sum += p0 + p1;
      }
      l_r[r] = l_r[r] * alpha + sum;
      m_r[r] = mx;
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt) {
        acc[dt][2 * r] *= alpha;
        acc[dt][2 * r + 1] *= alpha;
      }
    }
    cp_async_wait<1>();
    __syncthreads();
    const bf16* vt = sV + (j & 1) * BC * D;
#pragma unroll
    for (int kk = 0; kk < BC / 16; ++kk) {
      std::uint32_t pa[4] = {pack_bf16(s[2 * kk][0], s[2 * kk][1]), pack_bf16(s[2 * kk][2], s[2 * kk][3]),
                             pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                             pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dt = 0; dt < D / 8; dt += 2) {
        std::uint32_t t[4];
        ldmatrix_x4_trans(t,
                          smem_u32(vt + sw<D>(kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8, dt + lane / 16)));
        std::uint32_t b0[2] = {t[0], t[1]}, b1[2] = {t[2], t[3]};
        mma_bf16(acc[dt], pa, b0);
        mma_bf16(acc[dt + 1], pa, b1);
      }
    }
    if (j + 1 < n_tiles) load_tile<D>(sV + ((j + 1) & 1) * BC * D, vg, (j + 1) * BC, len, kvstride, tid);
    cp_async_commit();
  }
  // Row sums over the quad, normalise, store.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float l = l_r[r];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    float inv = l > 0 ? 1.f / l : 0.f;
    int row = qrow0 + r * 8;
    if (row >= len) continue;
    bf16* dst = o + (std::size_t(start + row) * heads + h) * D;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) {
      int c = dt * 8 + (lane % 4) * 2;
      *reinterpret_cast<__nv_bfloat162*>(dst + c) =
          __floats2bfloat162_rn(acc[dt][2 * r] * inv, acc[dt][2 * r + 1] * inv);
    }
  }
}

template <int D, bool CAUSAL>
void launch(const PrefillArgs& a, cudaStream_t stream) {
  auto kern = fa2_fwd_k<D, CAUSAL>;
  int smem = (BR + 4 * BC) * D * int(sizeof(bf16));
  CALIB_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  dim3 grid((a.max_seqlen + BR - 1) / BR, a.heads, a.num_seqs);
  float scale_log2 = float(1.0 / std::sqrt(double(D)) * 1.4426950408889634);
  kern<<<grid, WARPS * 32, smem, stream>>>(a.q, a.k, a.v, a.o, a.cu_seqlens, a.heads, a.kv_heads, scale_log2);
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

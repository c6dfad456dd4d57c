// Causal prefill over the paged KV cache on Hopper's warpgroup tensor cores (wgmma.mma_async; bf16
// cache, head_dim 128, GQA). Same task and grid as the mma.sync kernel (paged_prefill_attention.cu):
// one CTA = 128 query rows of one head of one chunk, keys read block by block through the chunk's
// block table, query row r of a chunk at position start + r. What differs is the tensor-core path:
//
// - two warpgroups of 64 query rows each; K/V tiles of 128 keys, double-buffered by cp.async into
//   shared memory in the 128-byte-swizzled layout wgmma reads (each 256-byte row split into two
//   64-column panels, 16-byte chunk c of row r stored at chunk c ^ (r & 7));
// - S = Q·Kᵀ is one m64n128 wgmma chain per warpgroup (Q and K both K-major, 8 k16 steps);
// - the probabilities P stay in registers: wgmma's accumulator layout of S is, two columns at a
//   time, the A-fragment layout of a register-sourced wgmma, so O += P·V reads P from registers and
//   V from shared memory as an MN-major operand (the head dimension contiguous, imm-trans-b);
// - the two warpgroups take turns on the tensor cores (named barriers): warpgroup 1's QKᵀ starts
//   when warpgroup 0's is done, warpgroup 0's PV when warpgroup 1's QKᵀ is, so one warpgroup's
//   softmax runs beside the other's matrix products;
// - each tile's cache block ids are read one tile ahead, so the copies never wait on the table.
//
// Measured on the H200 (docs/serving.md, "Prefill attention on Hopper's warpgroup MMA"): an
// 8,192-token causal prefill of 32 heads 1.64–1.66 ms per layer inside the engine's step against
// 2.18–2.19 ms for the mma.sync kernel; the ping-pong and the ids read ahead took it from 2.01 ms.
//
// Shared memory: Q 32 KiB + 2 stages × (K 32 KiB + V 32 KiB) = 160 KiB, one CTA per SM.
// Compiled for sm_90a only (the engine's CUDA architectures); the dispatcher picks it on 9.x GPUs.
#include <cfloat>
#include <cmath>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/hopper_util.cuh"
#include "calib_kernels/mma_util.cuh"
#include "engine/engine_kernels.hpp"
#include "engine/paged_prefill_launchers.hpp"

namespace infraplan::engine {
namespace {

using calib::cp_async16;
using calib::cp_async_commit;
using calib::cp_async_wait;
using calib::ex2_approx;
using calib::pack_bf16;
using calib::smem_u32;
using namespace calib::hopper;

constexpr int D = kHeadDim;  // 128
constexpr int WG = 2;        // warpgroups, 64 query rows each
constexpr int BR = 64 * WG;  // query rows per CTA
constexpr int BC = 128;      // keys per tile
constexpr int THREADS = 128 * WG;
constexpr int CH = D / 8;  // 16-byte chunks per row
constexpr int Q_BYTES = BR * D * 2, KV_BYTES = BC * D * 2;
constexpr int STAGES = 2;  // K/V tiles in flight (three measured no faster on the H200)
static_assert(STAGES == 2, "the prologue loads one tile ahead");
constexpr int SMEM = Q_BYTES + 2 * STAGES * KV_BYTES + 1024;  // + slack to align the tiles to 1024 bytes
constexpr std::uint32_t V_LBO = BC * 128;                     // bytes between the two 64-column panels of V
constexpr std::uint32_t V_SBO = 1024;                         // bytes between groups of 8 keys

// Byte offset of 16-byte chunk `cc` (0–15) of row `r` in a tile of `rows` rows.
__device__ __forceinline__ std::uint32_t swz(int rows, int r, int cc) {
  return std::uint32_t((cc >> 3) * rows * 128 + r * 128 + (((cc & 7) ^ (r & 7)) << 4));
}

// Query rows [row0, row0 + BR) of a [rows][heads][D] tensor; rows ≥ rows_valid are zero.
__device__ __forceinline__ void load_q(std::uint32_t sq, const bf16* g, int row0, int rows_valid, int stride,
                                       int tid) {
  for (int e = tid; e < BR * CH; e += THREADS) {
    const int r = e / CH, c = e % CH;
    const bool ok = row0 + r < rows_valid;
    cp_async16(sq + swz(BR, r, c), ok ? g + std::size_t(row0 + r) * stride + c * 8 : g, ok);
  }
}

// Thread `tid` copies rows tid / CH + 16 i (i < 8) of a K/V tile, 16-byte chunk tid % CH of each:
// row 16 i + tid / CH of the tile is offset tid / CH of the tile's i-th cache block. The tile's
// block ids are read from the block table one tile ahead (fetch_ids), so the copies of a tile
// never wait on the table.
constexpr int IDS = BC / kBlockSize;  // cache blocks per tile
static_assert(THREADS / CH == kBlockSize, "each thread's rows are one offset of every block");

__device__ __forceinline__ void fetch_ids(int (&ids)[IDS], const int* table, int key0, int kv_end) {
#pragma unroll
  for (int i = 0; i < IDS; ++i) {
    const int tok = key0 + i * kBlockSize;
    ids[i] = tok < kv_end ? __ldg(table + tok / kBlockSize) : 0;
  }
}

// Keys [key0, key0 + BC) of kv head `kvh` from the paged caches; keys ≥ kv_end are zero.
__device__ __forceinline__ void load_kv(std::uint32_t sk, std::uint32_t sv, const bf16* kc, const bf16* vc,
                                        const int (&ids)[IDS], int kvh, int kv_heads, int key0, int kv_end,
                                        int tid) {
  const int r0 = tid / CH, c = tid % CH;
#pragma unroll
  for (int i = 0; i < IDS; ++i) {
    const int r = r0 + i * kBlockSize;
    const bool ok = key0 + r < kv_end;
    const std::size_t off =
        ok ? ((std::size_t(ids[i]) * kv_heads + kvh) * kBlockSize + r0) * D + c * 8 : std::size_t(0);
    cp_async16(sk + swz(BC, r, c), kc + off, ok);
    cp_async16(sv + swz(BC, r, c), vc + off, ok);
  }
}

// Named barrier `id` over both warpgroups: one arrives (does not wait), the other waits.
__device__ __forceinline__ void named_sync(int id) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(THREADS) : "memory");
}
__device__ __forceinline__ void named_arrive(int id) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "n"(THREADS) : "memory");
}

// Makes this thread's cp.async writes to shared memory visible to wgmma (the async proxy).
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// grid = (heads, chunks, query blocks), the query block index reversed so the longest (last)
// blocks start first.
__global__ void __launch_bounds__(THREADS, 1) paged_prefill_wgmma_k(PagedPrefillArgs a, float scale_log2) {
  extern __shared__ unsigned char smem_raw[];
  const std::uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
  const std::uint32_t sQ = base, sK = base + Q_BYTES, sV = sK + STAGES * KV_BYTES;
  const int h = blockIdx.x, chunk = blockIdx.y;
  const int q0 = a.cu_q[chunk], qlen = a.cu_q[chunk + 1] - q0;
  const int m_block = int(gridDim.z) - 1 - int(blockIdx.z);
  if (m_block * BR >= qlen) return;
  const int p0 = a.start[chunk], kvlen = a.kv_len[chunk];
  const int kvh = h / (a.heads / a.kv_heads);
  const int* table = a.block_table + std::size_t(chunk) * a.max_blocks_per_seq;
  const int tid = threadIdx.x, wg = tid / 128, t = tid % 128, warp = t / 32, lane = t % 32;
  const bf16* qg = a.q + (std::size_t(q0) * a.heads + h) * D;
  const int last_row = min(qlen, (m_block + 1) * BR) - 1;
  const int kv_end = min(kvlen, p0 + last_row + 1);
  const int n_tiles = (kv_end + BC - 1) / BC;

  // This warpgroup's 64 rows (chunk-relative) and their positions; this thread's two rows.
  const int wg_row0 = m_block * BR + wg * 64;
  const bool wg_live = wg_row0 < qlen;  // a short chunk leaves the second warpgroup without rows
  const int wg_first = p0 + wg_row0, wg_last = wg_first + 63;
  const int row_lo = wg_row0 + warp * 16 + lane / 4;  // and row_lo + 8
  const int pos_lo = p0 + row_lo;

  float o[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) o[i] = 0.f;
  float m_r[2] = {-FLT_MAX, -FLT_MAX}, l_r[2] = {0.f, 0.f};

  int ids[IDS];
  fetch_ids(ids, table, 0, kv_end);
  load_q(sQ, qg, m_block * BR, qlen, a.heads * D, tid);
  load_kv(sK, sV, a.k_cache, a.v_cache, ids, kvh, a.kv_heads, 0, kv_end, tid);
  cp_async_commit();
  fetch_ids(ids, table, BC, kv_end);
  for (int j = 0; j < n_tiles; ++j) {
    cp_async_wait<0>();
    fence_proxy_async();
    __syncthreads();  // tile j visible to every warpgroup's wgmma; the other stage (tile j − 1) is free
    const int ahead = j + STAGES - 1;  // the tile loaded now, into the stage tile j − 1 used
    if (ahead < n_tiles) {
      load_kv(sK + (ahead % STAGES) * KV_BYTES, sV + (ahead % STAGES) * KV_BYTES, a.k_cache, a.v_cache, ids,
              kvh, a.kv_heads, ahead * BC, kv_end, tid);
      fetch_ids(ids, table, (ahead + 1) * BC, kv_end);
    }
    cp_async_commit();
    const int key0 = j * BC;
    const bool active = wg_live && key0 <= wg_last;  // warpgroup-uniform
    const std::uint32_t kt = sK + (j % STAGES) * KV_BYTES, vt = sV + (j % STAGES) * KV_BYTES;

    float s[64];
    if (wg == 1) named_sync(1);  // warpgroup 1's QKᵀ after warpgroup 0's
    if (active) {
#pragma unroll
      for (int i = 0; i < 64; ++i) s[i] = 0.f;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        const std::uint64_t dq = smem_desc_sw128(sQ + (kk >> 2) * BR * 128 + wg * 64 * 128) + 2 * (kk & 3);
        const std::uint64_t dk = smem_desc_sw128(kt + (kk >> 2) * BC * 128) + 2 * (kk & 3);
        wgmma_m64n128(s, dq, dk);
      }
      wgmma_commit();
      wgmma_wait<0>();
      fence_regs(s);
    }
    named_arrive(wg == 0 ? 1 : 2);
    if (!active) {
      if (wg == 0) named_sync(2);
      continue;
    }

    // s[j8 * 4 + hh * 2 + e]: row row_lo + 8 hh, key key0 + j8 * 8 + (lane % 4) * 2 + e.
    if (key0 + BC > kv_end || key0 + BC - 1 > wg_first) {
#pragma unroll
      for (int j8 = 0; j8 < BC / 8; ++j8)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int key = key0 + j8 * 8 + (lane % 4) * 2 + e;
            if (key >= kv_end || key > pos_lo + 8 * hh) s[j8 * 4 + hh * 2 + e] = -INFINITY;
          }
    }

    // Online softmax with lazy rescaling (the mma.sync kernel's): s becomes P.
    float mx[2];
    bool grow = false;
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      float x = m_r[hh];
#pragma unroll
      for (int j8 = 0; j8 < BC / 8; ++j8) x = fmaxf(x, fmaxf(s[j8 * 4 + hh * 2], s[j8 * 4 + hh * 2 + 1]));
      x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
      x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
      mx[hh] = x;
      grow = grow || (x - m_r[hh]) * scale_log2 > 8.f;
    }
    if (__any_sync(0xffffffffu, grow)) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const float alpha = ex2_approx((m_r[hh] - mx[hh]) * scale_log2);
        m_r[hh] = mx[hh];
        l_r[hh] *= alpha;
#pragma unroll
        for (int j8 = 0; j8 < D / 8; ++j8) {
          o[j8 * 4 + hh * 2] *= alpha;
          o[j8 * 4 + hh * 2 + 1] *= alpha;
        }
      }
    }
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const float ms = m_r[hh] * scale_log2;
      float sum = 0.f;
#pragma unroll
      for (int j8 = 0; j8 < BC / 8; ++j8) {
        const float p0v = ex2_approx(fmaf(s[j8 * 4 + hh * 2], scale_log2, -ms));
        const float p1v = ex2_approx(fmaf(s[j8 * 4 + hh * 2 + 1], scale_log2, -ms));
        s[j8 * 4 + hh * 2] = p0v;
        s[j8 * 4 + hh * 2 + 1] = p1v;
        sum += p0v + p1v;
      }
      l_r[hh] += sum;
    }

    // O += P·V: k16 step kk covers keys 16 kk … 16 kk + 15 (accumulator column groups 2 kk, 2 kk + 1).
    std::uint32_t pa[BC / 16][4];
#pragma unroll
    for (int kk = 0; kk < BC / 16; ++kk) {
      pa[kk][0] = pack_bf16(s[(2 * kk) * 4 + 0], s[(2 * kk) * 4 + 1]);
      pa[kk][1] = pack_bf16(s[(2 * kk) * 4 + 2], s[(2 * kk) * 4 + 3]);
      pa[kk][2] = pack_bf16(s[(2 * kk + 1) * 4 + 0], s[(2 * kk + 1) * 4 + 1]);
      pa[kk][3] = pack_bf16(s[(2 * kk + 1) * 4 + 2], s[(2 * kk + 1) * 4 + 3]);
    }
    if (wg == 0) named_sync(2);  // warpgroup 0's PV after warpgroup 1's QKᵀ
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BC / 16; ++kk)
      wgmma_m64n128_rs_mn(o, pa[kk], smem_desc_sw128_mn(vt + kk * 16 * 128, V_LBO, V_SBO));
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(o);
  }
  if (!wg_live) return;
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    float l = l_r[hh];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const float inv = l > 0 ? 1.f / l : 0.f;
    const int row = row_lo + 8 * hh;
    if (row >= qlen) continue;
    bf16* dst = a.out + (std::size_t(q0 + row) * a.heads + h) * D;
#pragma unroll
    for (int j8 = 0; j8 < D / 8; ++j8) {
      const int c = j8 * 8 + (lane % 4) * 2;
      *reinterpret_cast<__nv_bfloat162*>(dst + c) =
          __floats2bfloat162_rn(o[j8 * 4 + hh * 2] * inv, o[j8 * 4 + hh * 2 + 1] * inv);
    }
  }
}

}  // namespace

void paged_prefill_wgmma(const PagedPrefillArgs& a, cudaStream_t stream) {
  const int m_blocks = (a.max_q + BR - 1) / BR;
  if (m_blocks > 65535 || a.chunks > 65535)
    throw calib::CudaError("paged_prefill_attention: too many blocks");
  CALIB_CUDA(cudaFuncSetAttribute(paged_prefill_wgmma_k, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  const float scale_log2 = float(1.0 / std::sqrt(double(D)) * 1.4426950408889634);
  paged_prefill_wgmma_k<<<dim3(unsigned(a.heads), unsigned(a.chunks), unsigned(m_blocks)), THREADS, SMEM,
                          stream>>>(a, scale_log2);
  CALIB_LAUNCH();
}

}  // namespace infraplan::engine

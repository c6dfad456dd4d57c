// Causal prefill over the paged KV cache on Hopper's warpgroup tensor cores (wgmma.mma_async; bf16
// cache, head_dim 128, GQA). Same task and grid as the mma.sync kernel (paged_prefill_attention.cu):
// one CTA = 128 query rows of one head of one chunk, keys read block by block through the chunk's
// block table, query row r of a chunk at position start + r. What differs is the tensor-core path:
//
// - warp specialisation: warpgroup 0 is the producer — its 128 threads copy K/V tiles of 128 keys
//   with cp.async (zero-filled past the chunk's keys) into a ring of three stages, in the 128-byte-
//   swizzled layout wgmma reads (each 256-byte row split into two 64-column panels, 16-byte chunk c
//   of row r stored at chunk c ^ (r & 7)), each stage's arrival tracked by an mbarrier; it gives
//   most of its registers to the consumers (setmaxnreg);
// - warpgroups 1 and 2 are consumers of 64 query rows each: S = Q·Kᵀ is one m64n128 wgmma chain
//   (Q and K both K-major, 8 k16 steps); the probabilities P stay in registers (wgmma's accumulator
//   layout of S is, two columns at a time, the A-fragment layout of a register-sourced wgmma), so
//   O += P·V reads P from registers and V from shared memory as an MN-major operand;
// - each consumer issues O += P(j)·V(j) and S(j+1) = Q·K(j+1)ᵀ together and computes the softmax of
//   tile j + 1 while the other consumer's pair runs: the two take turns on the tensor cores (named
//   barriers), so a softmax hides behind two matrix products instead of one;
// - the producer reads each tile's cache block ids one tile ahead.
//
// Measured on the H200: docs/serving.md, "Prefill attention on Hopper's warpgroup MMA".
//
// Shared memory: Q 32 KiB + 3 stages × (K 32 KiB + V 32 KiB) = 224 KiB, one CTA per SM.
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

constexpr int D = kHeadDim;      // 128
constexpr int CONSUMERS = 2;     // warpgroups of 64 query rows
constexpr int BR = 64 * CONSUMERS;  // query rows per CTA
constexpr int BC = 128;          // keys per tile
constexpr int THREADS = 128 * (CONSUMERS + 1);
constexpr int CH = D / 8;  // 16-byte chunks per row
constexpr int Q_BYTES = BR * D * 2, KV_BYTES = BC * D * 2;
constexpr int STAGES = 3;  // K/V tiles in flight
constexpr int SMEM = Q_BYTES + 2 * STAGES * KV_BYTES + 1024;  // + slack to align the tiles to 1024 bytes
static_assert(SMEM <= 227 * 1024, "shared memory per CTA");
constexpr std::uint32_t V_LBO = BC * 128;  // bytes between the two 64-column panels of V
constexpr std::uint32_t V_SBO = 1024;      // bytes between groups of 8 keys
// __launch_bounds__(THREADS, 1) caps every thread at 168 registers; setmaxnreg moves them from the
// producer to the consumers (the CTA's total stays 168 × THREADS).
constexpr int REG_CAP = (65536 / THREADS) & ~7;
constexpr int PRODUCER_REGS = 56;
constexpr int CONSUMER_REGS = ((REG_CAP * THREADS - 128 * PRODUCER_REGS) / (128 * CONSUMERS)) & ~7;
static_assert(CONSUMER_REGS == 224, "register split between producer and consumers");
// Named barriers: 0 is __syncthreads; TURN + w lets consumer w issue its matrix products; Q_READY + w
// orders consumer w's copies of its query rows before its first wgmma.
constexpr int TURN = 1, Q_READY = 3;

// Byte offset of 16-byte chunk `cc` (0–15) of row `r` in a tile of `rows` rows.
__device__ __forceinline__ std::uint32_t swz(int rows, int r, int cc) {
  return std::uint32_t((cc >> 3) * rows * 128 + r * 128 + (((cc & 7) ^ (r & 7)) << 4));
}

// Consumer `c`'s 64 query rows [row0, row0 + 64) of a [rows][heads][D] tensor into rows 64 c … of the
// Q tile; rows ≥ rows_valid are zero.
__device__ __forceinline__ void load_q(std::uint32_t sq, const bf16* g, int row0, int rows_valid, int stride,
                                       int c, int t) {
  for (int e = t; e < 64 * CH; e += 128) {
    const int r = e / CH, cc = e % CH;
    const bool ok = row0 + r < rows_valid;
    cp_async16(sq + swz(BR, c * 64 + r, cc), ok ? g + std::size_t(row0 + r) * stride + cc * 8 : g, ok);
  }
}

// Producer thread `t` copies rows t / CH + 8 i (i < 16) of a K/V tile, 16-byte chunk t % CH of each:
// row 8 i + t / CH of the tile is offset t / CH + 8 (i % 2) of the tile's (i / 2)-th cache block.
constexpr int IDS = BC / kBlockSize;  // cache blocks per tile
static_assert(kBlockSize == 16 && 128 / CH == 8, "two of each thread's rows per cache block");

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
                                        int t) {
  const int r0 = t / CH, c = t % CH;
#pragma unroll
  for (int i = 0; i < BC / 8; ++i) {
    const int r = r0 + 8 * i;
    const bool ok = key0 + r < kv_end;
    const std::size_t off =
        ok ? ((std::size_t(ids[i / 2]) * kv_heads + kvh) * kBlockSize + r0 + 8 * (i % 2)) * D + c * 8
           : std::size_t(0);
    cp_async16(sk + swz(BC, r, c), kc + off, ok);
    cp_async16(sv + swz(BC, r, c), vc + off, ok);
  }
}

// The mbarrier counts one arrival of this thread once all its earlier cp.async copies have landed.
__device__ __forceinline__ void cp_async_arrive(std::uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

template <int COUNT>
__device__ __forceinline__ void named_sync(int id) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(COUNT) : "memory");
}
template <int COUNT>
__device__ __forceinline__ void named_arrive(int id) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "n"(COUNT) : "memory");
}

// Orders the cp.async writes this thread has observed before the wgmma (async proxy) reads after it.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// grid = (heads, chunks, query blocks), the query block index reversed so the longest (last)
// blocks start first.
__global__ void __launch_bounds__(THREADS, 1) paged_prefill_wgmma_k(PagedPrefillArgs a, float scale_log2) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) std::uint64_t full[STAGES], empty[STAGES];
  const std::uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
  const std::uint32_t sQ = base, sK = base + Q_BYTES, sV = sK + STAGES * KV_BYTES;
  const int h = blockIdx.x, chunk = blockIdx.y;
  const int q0 = a.cu_q[chunk], qlen = a.cu_q[chunk + 1] - q0;
  const int m_block = int(gridDim.z) - 1 - int(blockIdx.z);
  if (m_block * BR >= qlen) return;
  const int p0 = a.start[chunk], kvlen = a.kv_len[chunk];
  const int kvh = h / (a.heads / a.kv_heads);
  const int last_row = min(qlen, (m_block + 1) * BR) - 1;
  const int kv_end = min(kvlen, p0 + last_row + 1);
  const int n_tiles = (kv_end + BC - 1) / BC;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  // A block of at most 64 rows (a short chunk's last) leaves consumer 1 without rows: it leaves, and
  // consumer 0 runs alone, without turns.
  const bool solo = qlen - m_block * BR <= 64;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(smem_u32(&full[s]), 128);                                // the producer's threads
      mbar_init(smem_u32(&empty[s]), 128 * (solo ? 1 : CONSUMERS));  // every working consumer thread
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (wg == 0) {  // producer
    setmaxnreg_dec<PRODUCER_REGS>();
    const int* table = a.block_table + std::size_t(chunk) * a.max_blocks_per_seq;
    int ids[IDS];
    fetch_ids(ids, table, 0, kv_end);
    for (int j = 0; j < n_tiles; ++j) {
      const int s = j % STAGES;
      if (j >= STAGES) mbar_wait(smem_u32(&empty[s]), std::uint32_t(j / STAGES - 1) & 1u);
      load_kv(sK + s * KV_BYTES, sV + s * KV_BYTES, a.k_cache, a.v_cache, ids, kvh, a.kv_heads, j * BC, kv_end,
              t);
      fetch_ids(ids, table, (j + 1) * BC, kv_end);
      cp_async_arrive(smem_u32(&full[s]));
    }
    cp_async_wait<0>();
    return;
  }

  const int c = wg - 1, warp = t / 32, lane = t % 32;
  if (solo && c == 1) {
    setmaxnreg_dec<PRODUCER_REGS>();
    return;
  }
  setmaxnreg_inc<CONSUMER_REGS>();
  // This consumer's 64 rows (chunk-relative) and their positions; this thread's two rows.
  const int wg_row0 = m_block * BR + c * 64;
  const int wg_first = p0 + wg_row0;
  const int row_lo = wg_row0 + warp * 16 + lane / 4;  // and row_lo + 8
  const int pos_lo = p0 + row_lo;
  load_q(sQ, a.q + (std::size_t(q0) * a.heads + h) * D, wg_row0, qlen, a.heads * D, c, t);
  cp_async_commit();
  cp_async_wait<0>();
  fence_proxy_async();
  named_sync<128>(Q_READY + c);

  float o[64], s[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) o[i] = 0.f;
  float m_r[2] = {-FLT_MAX, -FLT_MAX}, l_r[2] = {0.f, 0.f};
  std::uint32_t pa[BC / 16][4];

  // S(j) = Q·K(j)ᵀ into s (issued, not waited for).
  auto issue_qk = [&](int j) {
#pragma unroll
    for (int i = 0; i < 64; ++i) s[i] = 0.f;
    const std::uint32_t kt = sK + (j % STAGES) * KV_BYTES;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const std::uint64_t dq = smem_desc_sw128(sQ + (kk >> 2) * BR * 128 + c * 64 * 128) + 2 * (kk & 3);
      const std::uint64_t dk = smem_desc_sw128(kt + (kk >> 2) * BC * 128) + 2 * (kk & 3);
      wgmma_m64n128(s, dq, dk);
    }
  };
  auto wait_full = [&](int j) {
    mbar_wait(smem_u32(&full[j % STAGES]), std::uint32_t(j / STAGES) & 1u);
    fence_proxy_async();
  };

  // Turn order on the tensor cores: consumer 0's S(0), consumer 1's S(0), then per tile j each
  // consumer's pair {P(j)·V(j), S(j+1)}, consumer 0 first. Consumer 1 gives no turn after its last.
  wait_full(0);
  if (c == 1) named_sync<256>(TURN + 1);
  wgmma_fence();
  issue_qk(0);
  wgmma_commit();
  if (!solo) named_arrive<256>(TURN + 1 - c);
  wgmma_wait<0>();
  fence_regs(s);

  // Tile j's softmax: masks S(j) in s, updates the running max and sum, rescales O, packs P into pa.
  auto softmax = [&](int j) {
    const int key0 = j * BC;
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
    // Online softmax with lazy rescaling (the mma.sync kernel's).
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
    // k16 step kk of P·V covers keys 16 kk … 16 kk + 15 (accumulator column groups 2 kk, 2 kk + 1).
#pragma unroll
    for (int kk = 0; kk < BC / 16; ++kk) {
      pa[kk][0] = pack_bf16(s[(2 * kk) * 4 + 0], s[(2 * kk) * 4 + 1]);
      pa[kk][1] = pack_bf16(s[(2 * kk) * 4 + 2], s[(2 * kk) * 4 + 3]);
      pa[kk][2] = pack_bf16(s[(2 * kk + 1) * 4 + 0], s[(2 * kk + 1) * 4 + 1]);
      pa[kk][3] = pack_bf16(s[(2 * kk + 1) * 4 + 2], s[(2 * kk + 1) * 4 + 3]);
    }
  };
  // O += P(j)·V(j) (issued, not waited for).
  auto issue_pv = [&](int j) {
    const std::uint32_t vt = sV + (j % STAGES) * KV_BYTES;
#pragma unroll
    for (int kk = 0; kk < BC / 16; ++kk)
      wgmma_m64n128_rs_mn(o, pa[kk], smem_desc_sw128_mn(vt + kk * 16 * 128, V_LBO, V_SBO));
  };

  // Every tile but the last: its P·V goes to the tensor cores with the next tile's Q·Kᵀ.
  for (int j = 0; j + 1 < n_tiles; ++j) {
    softmax(j);
    wait_full(j + 1);
    if (!solo) named_sync<256>(TURN + c);
    wgmma_fence();
    issue_pv(j);
    issue_qk(j + 1);
    wgmma_commit();
    if (!solo) named_arrive<256>(TURN + 1 - c);
    wgmma_wait<0>();
    fence_regs(o);
    fence_regs(s);
    mbar_arrive(smem_u32(&empty[j % STAGES]));
  }
  // The last tile: P·V alone; consumer 1 hands no turn back after it.
  softmax(n_tiles - 1);
  if (!solo) named_sync<256>(TURN + c);
  wgmma_fence();
  issue_pv(n_tiles - 1);
  wgmma_commit();
  if (c == 0 && !solo) named_arrive<256>(TURN + 1);
  wgmma_wait<0>();
  fence_regs(o);
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
      const int col = j8 * 8 + (lane % 4) * 2;
      *reinterpret_cast<__nv_bfloat162*>(dst + col) =
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

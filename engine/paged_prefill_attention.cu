// FlashAttention-2-style causal prefill over the paged KV cache (bf16, head_dim 128, GQA): the
// chunk's queries attend to every earlier key of their sequence — a cached prefix, earlier
// chunks and the chunk itself — read block by block through the sequence's block table. The
// structure is the calibration kernel's (calib_kernels/attention_prefill.cu): one CTA = 128 query
// rows of one head of one chunk, 4 warps × 32 rows, K/V tiles of 64 keys double-buffered through
// cp.async into XOR-swizzled shared memory, QKᵀ and PV on mma.sync m16n8k16, online softmax in
// registers. What changes: K/V rows are gathered from 16-token cache blocks, and query row r of a
// chunk sits at position start + r, so the causal mask and the tile skipping compare positions.
//
// An fp8 (E4M3) cache: the tiles' codes stream by cp.async into two 16 KiB staging stages (half
// the bytes of a bf16 tile), and after each tile arrives the CTA widens it to bf16 (exact) into one
// K and one V tile in the same swizzled layout, so the tensor-core path is the bf16 one. The key
// scale is folded into the softmax scale and the value scale into the output normalisation. The
// shared memory is the bf16 kernel's 96 KiB: Q, one bf16 K/V tile, two staging stages.
#include <cfloat>
#include <cmath>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/e4m3_widen.cuh"
#include "calib_kernels/flash_tile.cuh"
#include "calib_kernels/mma_util.cuh"
#include "engine/engine_kernels.hpp"
#include "engine/paged_prefill_launchers.hpp"

namespace infraplan::engine {
namespace {

using calib::cp_async16;
using calib::cp_async_commit;
using calib::cp_async_wait;
using calib::ex2_approx;
using calib::ldmatrix_x4;
using calib::ldmatrix_x4_trans;
using calib::mma_bf16;
using calib::pack_bf16;
using calib::smem_u32;
using calib::flash::LdOffsets;
using calib::flash::MT;
using calib::flash::pv_step;
using calib::flash::qk_step;
using calib::flash::softmax_step;
using calib::flash::sw;

constexpr int D = kHeadDim, WARPS = 4, BR = WARPS * 16 * MT, BC = 64, SUB = 32, THREADS = WARPS * 32;
constexpr int RB = D * 2;  // bytes per row
constexpr int CH = D / 8;  // 16-byte chunks per row

// Query rows [row0, row0 + BR) of a [rows][heads][D] tensor; rows ≥ rows_valid are zero.
__device__ __forceinline__ void load_q(bf16* s, const bf16* g, int row0, int rows_valid, int stride,
                                       int tid) {
  for (int e = tid; e < BR * CH; e += THREADS) {
    const int r = e / CH, c = e % CH;
    const bool ok = row0 + r < rows_valid;
    cp_async16(smem_u32(s + sw<D>(r, c)), ok ? g + std::size_t(row0 + r) * stride + c * 8 : g, ok);
  }
}

// Keys [key0, key0 + BC) of kv head `kvh` from the paged caches; keys ≥ kv_end are zero.
__device__ __forceinline__ void load_kv(bf16* sk, bf16* sv, const bf16* kc, const bf16* vc, const int* table,
                                        int kvh, int kv_heads, int key0, int kv_end, int tid) {
  for (int e = tid; e < BC * CH; e += THREADS) {
    const int r = e / CH, c = e % CH, tok = key0 + r;
    const bool ok = tok < kv_end;
    std::size_t off = 0;
    if (ok)
      off = ((std::size_t(table[tok / kBlockSize]) * kv_heads + kvh) * kBlockSize + tok % kBlockSize) * D +
            c * 8;
    cp_async16(smem_u32(sk + sw<D>(r, c)), kc + off, ok);
    cp_async16(smem_u32(sv + sw<D>(r, c)), vc + off, ok);
  }
}

// fp8: keys [key0, key0 + BC) of kv head `kvh` as E4M3 codes into a staging stage ([K, V][BC][D]
// bytes, 16-byte chunks unswizzled); keys ≥ kv_end are zero.
__device__ __forceinline__ void load_kv8(unsigned char* s8, const fp8* kc, const fp8* vc, const int* table,
                                         int kvh, int kv_heads, int key0, int kv_end, int tid) {
  constexpr int C8 = D / 16;  // 16-byte chunks per fp8 row
  for (int e = tid; e < BC * C8; e += THREADS) {
    const int r = e / C8, c = e % C8, tok = key0 + r;
    const bool ok = tok < kv_end;
    std::size_t off = 0;
    if (ok)
      off = ((std::size_t(table[tok / kBlockSize]) * kv_heads + kvh) * kBlockSize + tok % kBlockSize) * D +
            c * 16;
    cp_async16(smem_u32(s8 + r * D + c * 16), kc + off, ok);
    cp_async16(smem_u32(s8 + BC * D + r * D + c * 16), vc + off, ok);
  }
}

// fp8: a staging stage widened to the bf16 K and V tiles.
__device__ __forceinline__ void widen_kv(const unsigned char* s8, bf16* sk, bf16* sv, int tid) {
  constexpr int C8 = D / 16;
  for (int e = tid; e < BC * C8; e += THREADS) {
    const int r = e / C8, c = e % C8;
    uint4 k[2], v[2];
    calib::e4m3x16_to_bf16(*reinterpret_cast<const uint4*>(s8 + r * D + c * 16), k);
    calib::e4m3x16_to_bf16(*reinterpret_cast<const uint4*>(s8 + BC * D + r * D + c * 16), v);
    *reinterpret_cast<uint4*>(sk + sw<D>(r, 2 * c)) = k[0];
    *reinterpret_cast<uint4*>(sk + sw<D>(r, 2 * c + 1)) = k[1];
    *reinterpret_cast<uint4*>(sv + sw<D>(r, 2 * c)) = v[0];
    *reinterpret_cast<uint4*>(sv + sw<D>(r, 2 * c + 1)) = v[1];
  }
}

// Keys at or past kv_end, and keys after the query's position, to −inf.
template <int NK>
__device__ __forceinline__ void mask_step(float (&s)[MT][NK / 8][4], int key0, int kv_end, int qpos0,
                                          int lane) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NK / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = key0 + nt * 8 + (lane % 4) * 2 + (e & 1);
        const int pos = qpos0 + mt * 16 + (e >> 1) * 8;
        if (key >= kv_end || key > pos) s[mt][nt][e] = -INFINITY;
      }
}

// grid = (heads, chunks, query blocks), the query block index reversed so the longest (last)
// blocks start first. scale_log2 includes the key scale (fp8), out_scale is the value scale.
template <bool FP8>
__global__ void __launch_bounds__(THREADS, 2)
    paged_prefill_k(PagedPrefillArgs a, float scale_log2, float out_scale) {
  constexpr int kStages = FP8 ? 1 : 2;  // bf16 K/V tiles
  extern __shared__ __align__(128) unsigned char smem_raw[];
  bf16* sQ = reinterpret_cast<bf16*>(smem_raw);
  bf16* sK = sQ + BR * D;
  bf16* sV = sK + kStages * BC * D;
  unsigned char* s8 = reinterpret_cast<unsigned char*>(sV + kStages * BC * D);  // fp8: 2 × [K, V][BC][D]
  const int h = blockIdx.x, chunk = blockIdx.y;
  const int q0 = a.cu_q[chunk], qlen = a.cu_q[chunk + 1] - q0;
  const int m_block = int(gridDim.z) - 1 - int(blockIdx.z);
  if (m_block * BR >= qlen) return;
  const int p0 = a.start[chunk], kvlen = a.kv_len[chunk];
  const int kvh = h / (a.heads / a.kv_heads);
  const int* table = a.block_table + std::size_t(chunk) * a.max_blocks_per_seq;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const bf16* qg = a.q + (std::size_t(q0) * a.heads + h) * D;
  const int qstride = a.heads * D;
  const int last_row = min(qlen, (m_block + 1) * BR) - 1;
  const int kv_end = min(kvlen, p0 + last_row + 1);
  const int n_tiles = (kv_end + BC - 1) / BC;

  float acc[MT][D / 8][4] = {};
  float m_r[MT][2], l_r[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      m_r[mt][r] = -FLT_MAX;
      l_r[mt][r] = 0.f;
    }
  const int wrow0 = warp * 16 * MT;
  const int qrow0 = m_block * BR + wrow0 + lane / 4;  // this thread's rows: qrow0 + 16 mt + {0, 8}
  const int qpos0 = p0 + qrow0;
  const int wfirst = p0 + m_block * BR + wrow0, wlast = wfirst + 16 * MT - 1;  // positions
  const int l8 = lane & 7;
  const std::uint32_t sQa = smem_u32(sQ), sKa = smem_u32(sK), sVa = smem_u32(sV);
  const LdOffsets off{std::uint32_t((wrow0 + (lane & 15)) * RB + (((lane >> 4) ^ l8) << 4)),
                      std::uint32_t((l8 + ((lane >> 4) << 3)) * RB + ((((lane >> 3) & 1) ^ l8) << 4)),
                      std::uint32_t((l8 + (((lane >> 3) & 1) << 3)) * RB + (((lane >> 4) ^ l8) << 4))};

  load_q(sQ, qg, m_block * BR, qlen, qstride, tid);
  if constexpr (FP8)
    load_kv8(s8, a.k_fp8, a.v_fp8, table, kvh, a.kv_heads, 0, kv_end, tid);
  else
    load_kv(sK, sV, a.k_cache, a.v_cache, table, kvh, a.kv_heads, 0, kv_end, tid);
  cp_async_commit();
  for (int j = 0; j < n_tiles; ++j) {
    cp_async_wait<0>();
    __syncthreads();  // tile j visible; the other stage (tile j − 1) is free, and so (fp8) are the bf16 tiles
    if (j + 1 < n_tiles) {
      if constexpr (FP8)
        load_kv8(s8 + ((j + 1) & 1) * 2 * BC * D, a.k_fp8, a.v_fp8, table, kvh, a.kv_heads, (j + 1) * BC,
                 kv_end, tid);
      else
        load_kv(sK + ((j + 1) & 1) * BC * D, sV + ((j + 1) & 1) * BC * D, a.k_cache, a.v_cache, table, kvh,
                a.kv_heads, (j + 1) * BC, kv_end, tid);
    }
    cp_async_commit();
    if constexpr (FP8) {
      widen_kv(s8 + (j & 1) * 2 * BC * D, sK, sV, tid);
      __syncthreads();  // the bf16 tiles of tile j complete
    }
    const std::uint32_t kt = FP8 ? sKa : sKa + (j & 1) * BC * RB, vt = FP8 ? sVa : sVa + (j & 1) * BC * RB;
#pragma unroll
    for (int hs = 0; hs < BC / SUB; ++hs) {
      const int key0 = j * BC + hs * SUB;
      if (key0 > wlast) continue;  // warp-uniform: every key after this warp's last position
      float s[MT][SUB / 8][4];
      qk_step<D, SUB>(s, sQa, kt + hs * SUB * RB, off);
      if (key0 + SUB > kv_end || key0 + SUB - 1 > wfirst) mask_step<SUB>(s, key0, kv_end, qpos0, lane);
      softmax_step<D, SUB>(s, m_r, l_r, acc, scale_log2);
      pv_step<D, SUB>(acc, s, vt + hs * SUB * RB, off);
    }
  }
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float l = l_r[mt][r];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      const float inv = l > 0 ? out_scale / l : 0.f;
      const int row = qrow0 + mt * 16 + r * 8;
      if (row >= qlen) continue;
      bf16* dst = a.out + (std::size_t(q0 + row) * a.heads + h) * D;
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt) {
        const int c = dt * 8 + (lane % 4) * 2;
        *reinterpret_cast<__nv_bfloat162*>(dst + c) =
            __floats2bfloat162_rn(acc[mt][dt][2 * r] * inv, acc[mt][dt][2 * r + 1] * inv);
      }
    }
}

}  // namespace

void paged_prefill_mma(const PagedPrefillArgs& a, cudaStream_t stream) {
  const int m_blocks = (a.max_q + BR - 1) / BR;
  if (m_blocks > 65535 || a.chunks > 65535)
    throw calib::CudaError("paged_prefill_attention: too many blocks");
  const bool fp8_cache = a.k_fp8 != nullptr;
  constexpr int smem = (BR + 4 * BC) * D * int(sizeof(bf16));
  static_assert((BR + 2 * BC) * D * int(sizeof(bf16)) + 2 * 2 * BC * D == smem, "fp8: same shared memory");
  auto kern = fp8_cache ? paged_prefill_k<true> : paged_prefill_k<false>;
  CALIB_CUDA(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const double base = 1.0 / std::sqrt(double(D)) * 1.4426950408889634;
  const float scale_log2 = float(fp8_cache ? base * double(a.k_scale) : base);
  const float out_scale = fp8_cache ? a.v_scale : 1.0f;
  kern<<<dim3(unsigned(a.heads), unsigned(a.chunks), unsigned(m_blocks)), THREADS, smem, stream>>>(
      a, scale_log2, out_scale);
  CALIB_LAUNCH();
}

namespace {
bool hopper_device() {
  int dev = 0, major = 0;
  CALIB_CUDA(cudaGetDevice(&dev));
  CALIB_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  return major == 9;
}
}  // namespace

void paged_prefill_attention(const PagedPrefillArgs& a, cudaStream_t stream) {
  if (a.chunks <= 0 || a.max_q <= 0) return;
  if (a.heads <= 0 || a.kv_heads <= 0 || a.heads % a.kv_heads != 0)
    throw calib::CudaError("paged_prefill_attention: heads must be a positive multiple of kv_heads");
  const bool fp8_cache = a.k_fp8 != nullptr;
  if (fp8_cache != (a.v_fp8 != nullptr) || fp8_cache == (a.k_cache != nullptr) ||
      (a.k_cache != nullptr) != (a.v_cache != nullptr))
    throw calib::CudaError(
        "paged_prefill_attention: set k_cache and v_cache (bf16) or k_fp8 and v_fp8 (fp8)");
  if (resolved_prefill_kernel(a.kernel, fp8_cache) == PrefillKernel::wgmma)
    paged_prefill_wgmma(a, stream);
  else
    paged_prefill_mma(a, stream);
}

PrefillKernel resolved_prefill_kernel(PrefillKernel k, bool fp8_cache) {
  switch (k) {
    case PrefillKernel::mma_sync:
      return k;
    case PrefillKernel::wgmma:
      if (fp8_cache)
        throw calib::CudaError("paged_prefill_attention: the wgmma kernel reads a bf16 cache only");
      if (!hopper_device())
        throw calib::CudaError("paged_prefill_attention: the wgmma kernel needs a 9.x GPU");
      return k;
    case PrefillKernel::automatic:
      break;
  }
  // Asked once per process: a host holds one GPU model.
  static const bool hopper = hopper_device();
  return !fp8_cache && hopper ? PrefillKernel::wgmma : PrefillKernel::mma_sync;
}

}  // namespace infraplan::engine

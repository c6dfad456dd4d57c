// The engine's memory-bound kernels: weight initialisation, embedding gather, fused residual add
// + RMSNorm (all rows, or the sampled rows only), fused rotary embedding + paged KV-cache write,
// (bf16 or fp8 E4M3 cache), KV block copies (copy-on-write) and the greedy sampler (row argmax). 16-byte accesses
// throughout; one CTA per row where a row is a unit of work.
#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>

#include "calib_kernels/cuda_util.hpp"
#include "engine/engine_kernels.hpp"

namespace infraplan::engine {
namespace {

struct alignas(16) Vec8 {
  __nv_bfloat162 h[4];
};

__global__ void init_weights_k(bf16* p, std::int64_t n, WeightInit init, std::uint64_t seed,
                               std::uint32_t id) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16_rn(weight_value(init, seed, id, std::uint64_t(i)));
}

__global__ void embed_k(const bf16* __restrict__ table, const int* __restrict__ tokens,
                        bf16* __restrict__ out, int hidden) {
  const int row = blockIdx.x, chunks = hidden / 8;
  const Vec8* src = reinterpret_cast<const Vec8*>(table + std::size_t(tokens[row]) * hidden);
  Vec8* dst = reinterpret_cast<Vec8*>(out + std::size_t(row) * hidden);
  for (int c = threadIdx.x; c < chunks; c += blockDim.x) dst[c] = src[c];
}

constexpr int kNormThreads = 128;

// One CTA per row; each thread keeps NC 16-byte chunks of the row in registers.
template <int NC>
__global__ void __launch_bounds__(kNormThreads)
    add_rmsnorm_k(bf16* resid, const bf16* __restrict__ delta, const bf16* __restrict__ w,
                  bf16* __restrict__ out, const int* __restrict__ rows, int hidden, float eps,
                  bool write_resid, const int* __restrict__ live_rows, float* amax) {
  const int row = rows ? rows[blockIdx.x] : int(blockIdx.x);
  const int chunks = hidden / 8, tid = threadIdx.x;
  Vec8* r = reinterpret_cast<Vec8*>(resid + std::size_t(row) * hidden);
  const Vec8* d = delta ? reinterpret_cast<const Vec8*>(delta + std::size_t(row) * hidden) : nullptr;
  Vec8 v[NC];
  float ss = 0;
#pragma unroll
  for (int i = 0; i < NC; ++i) {
    const int c = tid + i * kNormThreads;
    if (c >= chunks) continue;
    Vec8 a = r[c];
    if (d) {
      const Vec8 b = d[c];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 fa = __bfloat1622float2(a.h[k]), fb = __bfloat1622float2(b.h[k]);
        a.h[k] = __floats2bfloat162_rn(fa.x + fb.x, fa.y + fb.y);
      }
      if (write_resid) r[c] = a;
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __bfloat1622float2(a.h[k]);
      ss = fmaf(f.x, f.x, fmaf(f.y, f.y, ss));
    }
    v[i] = a;
  }
  __shared__ float red[kNormThreads / 32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if ((tid & 31) == 0) red[tid >> 5] = ss;
  __syncthreads();
  ss = 0;
#pragma unroll
  for (int i = 0; i < kNormThreads / 32; ++i) ss += red[i];
  const float rs = rsqrtf(ss / float(hidden) + eps);
  const Vec8* wv = reinterpret_cast<const Vec8*>(w);
  Vec8* o = reinterpret_cast<Vec8*>(out + std::size_t(rows ? int(blockIdx.x) : row) * hidden);
  float m = 0.0f;  // max |out| of this thread's part of the row (fp8 scales)
#pragma unroll
  for (int i = 0; i < NC; ++i) {
    const int c = tid + i * kNormThreads;
    if (c >= chunks) continue;
    const Vec8 g = wv[c];
    Vec8 y;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __bfloat1622float2(v[i].h[k]), gw = __bfloat1622float2(g.h[k]);
      y.h[k] =
          __floats2bfloat162_rn(__fmul_rn(__fmul_rn(f.x, rs), gw.x), __fmul_rn(__fmul_rn(f.y, rs), gw.y));
      const float2 yf = __bfloat1622float2(y.h[k]);
      m = fmaxf(m, fmaxf(fabsf(yf.x), fabsf(yf.y)));
    }
    o[c] = y;
  }
  if (!amax || int(blockIdx.x) >= *live_rows) return;  // uniform across the CTA
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  __shared__ float red_max[kNormThreads / 32];
  if ((tid & 31) == 0) red_max[tid >> 5] = m;
  __syncthreads();
  if (tid == 0) {
#pragma unroll
    for (int i = 1; i < kNormThreads / 32; ++i) m = fmaxf(m, red_max[i]);
    atomicMax(reinterpret_cast<int*>(amax), __float_as_int(m));  // m ≥ 0: int order is float order
  }
}

struct NormAmax {
  const int* live_rows = nullptr;  ///< rows [0, *live_rows) count
  float* amax = nullptr;           ///< null: no reduction
};

template <int NC>
void launch_norm(bf16* resid, const bf16* delta, const bf16* w, bf16* out, const int* rows, int n, int hidden,
                 float eps, bool write_resid, NormAmax am, cudaStream_t stream) {
  add_rmsnorm_k<NC><<<n, kNormThreads, 0, stream>>>(resid, delta, w, out, rows, hidden, eps, write_resid,
                                                    am.live_rows, am.amax);
  CALIB_LAUNCH();
}

void norm_dispatch(bf16* resid, const bf16* delta, const bf16* w, bf16* out, const int* rows, int n,
                   int hidden, float eps, bool write_resid, cudaStream_t stream, NormAmax am = {}) {
  if (hidden % 8 != 0 || hidden > 16384)
    throw calib::CudaError("add_rmsnorm: hidden must be a multiple of 8, ≤ 16384");
  if (n <= 0) return;
  const int chunks = hidden / 8;
  if (chunks <= kNormThreads)
    launch_norm<1>(resid, delta, w, out, rows, n, hidden, eps, write_resid, am, stream);
  else if (chunks <= 2 * kNormThreads)
    launch_norm<2>(resid, delta, w, out, rows, n, hidden, eps, write_resid, am, stream);
  else if (chunks <= 4 * kNormThreads)
    launch_norm<4>(resid, delta, w, out, rows, n, hidden, eps, write_resid, am, stream);
  else if (chunks <= 8 * kNormThreads)
    launch_norm<8>(resid, delta, w, out, rows, n, hidden, eps, write_resid, am, stream);
  else
    launch_norm<16>(resid, delta, w, out, rows, n, hidden, eps, write_resid, am, stream);
}

// Two cached elements as an fp8 cache stores them: the E4M3 codes of x / scale (round to nearest
// even, saturate to ±448: engine/fp8_e4m3.hpp).
__device__ __forceinline__ unsigned e4m3x2(__nv_bfloat162 h, float scale) {
  const float2 f = __bfloat1622float2(h);
  return __nv_cvt_float2_to_fp8x2(make_float2(__fdiv_rn(f.x, scale), __fdiv_rn(f.y, scale)), __NV_SATFINITE,
                                  __NV_E4M3);
}

/// Stores 8 consecutive bf16 values into the cache at `dst`: as is, or quantized with `scale`.
__device__ __forceinline__ void store8(bf16* dst, const Vec8& v, float) { *reinterpret_cast<Vec8*>(dst) = v; }
__device__ __forceinline__ void store8(fp8* dst, const Vec8& v, float scale) {
  *reinterpret_cast<uint2*>(dst) = make_uint2(e4m3x2(v.h[0], scale) | (e4m3x2(v.h[1], scale) << 16),
                                              e4m3x2(v.h[2], scale) | (e4m3x2(v.h[3], scale) << 16));
}

// One CTA per token: 8 threads per q or k head (8 rotate-half pairs each), 16 per v head. The
// cache gets the bf16 values a bf16 cache would hold, quantized when T is fp8.
template <typename T>
__global__ void __launch_bounds__(128)
    rope_cache_k(const bf16* __restrict__ qkv, bf16* __restrict__ q_out, T* __restrict__ k_cache,
                 T* __restrict__ v_cache, const int* __restrict__ positions, const int* __restrict__ slots,
                 const float2* __restrict__ rope, int heads, int kv_heads, float k_scale, float v_scale) {
  constexpr int D = kHeadDim, HALF = D / 2;
  const int t = blockIdx.x;
  const int pos = positions[t], slot = slots[t];
  const bf16* x = qkv + std::size_t(t) * (heads + 2 * kv_heads) * D;
  const std::size_t cache_row = slot >= 0 ? std::size_t(slot / kBlockSize) * kv_heads * kBlockSize * D +
                                                std::size_t(slot % kBlockSize) * D
                                          : 0;
  const int rot_items = (heads + kv_heads) * 8, items = rot_items + kv_heads * 16;
  for (int it = threadIdx.x; it < items; it += blockDim.x) {
    if (it < rot_items) {
      const int hh = it / 8, j0 = (it % 8) * 8;
      const bf16* src = x + hh * D;
      const Vec8 a = *reinterpret_cast<const Vec8*>(src + j0),
                 b = *reinterpret_cast<const Vec8*>(src + j0 + HALF);
      const float4* cs4 = reinterpret_cast<const float4*>(rope + std::size_t(pos) * HALF + j0);
      Vec8 oa, ob;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float4 cs = cs4[e];  // (cos, sin) of pairs j0 + 2e and j0 + 2e + 1
        const float2 fa = __bfloat1622float2(a.h[e]), fb = __bfloat1622float2(b.h[e]);
        oa.h[e] = __floats2bfloat162_rn(fa.x * cs.x - fb.x * cs.y, fa.y * cs.z - fb.y * cs.w);
        ob.h[e] = __floats2bfloat162_rn(fb.x * cs.x + fa.x * cs.y, fb.y * cs.z + fa.y * cs.w);
      }
      if (hh < heads) {
        bf16* dst = q_out + (std::size_t(t) * heads + hh) * D;
        *reinterpret_cast<Vec8*>(dst + j0) = oa;
        *reinterpret_cast<Vec8*>(dst + j0 + HALF) = ob;
      } else if (slot >= 0) {
        T* dst = k_cache + cache_row + std::size_t(hh - heads) * kBlockSize * D;
        store8(dst + j0, oa, k_scale);
        store8(dst + j0 + HALF, ob, k_scale);
      }
    } else if (slot >= 0) {
      const int j = it - rot_items, kvh = j / 16, c = j % 16;
      const Vec8 v = *reinterpret_cast<const Vec8*>(x + (heads + kv_heads + kvh) * D + c * 8);
      store8(v_cache + cache_row + std::size_t(kvh) * kBlockSize * D + c * 8, v, v_scale);
    }
  }
}

__global__ void copy_blocks_k(unsigned char* cache, const int2* pairs, std::int64_t plane_bytes,
                              std::int64_t block_bytes) {
  const int2 p = pairs[blockIdx.x];
  unsigned char* plane = cache + std::int64_t(blockIdx.y) * plane_bytes;
  const uint4* src = reinterpret_cast<const uint4*>(plane + std::int64_t(p.x) * block_bytes);
  uint4* dst = reinterpret_cast<uint4*>(plane + std::int64_t(p.y) * block_bytes);
  for (std::int64_t c = threadIdx.x; c < block_bytes / 16; c += blockDim.x) dst[c] = src[c];
}

__global__ void init_fp8_k(fp8* p, std::int64_t n, std::uint64_t seed, std::uint32_t id) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    p[i].__x = __nv_cvt_float_to_fp8(weight_value(WeightInit{0.0f, 1.0f}, seed, id, std::uint64_t(i)),
                                     __NV_SATFINITE, __NV_E4M3);
}

constexpr int kArgmaxThreads = 1024;

__global__ void __launch_bounds__(kArgmaxThreads)
    argmax_k(const float* __restrict__ logits, int* __restrict__ out, int vocab) {
  const float* x = logits + std::size_t(blockIdx.x) * vocab;
  float best = -INFINITY;
  int idx = INT_MAX;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
    const float v = x[i];
    if (v > best || (v == best && i < idx)) {
      best = v;
      idx = i;
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float ob = __shfl_xor_sync(0xffffffffu, best, o);
    const int oi = __shfl_xor_sync(0xffffffffu, idx, o);
    if (ob > best || (ob == best && oi < idx)) {
      best = ob;
      idx = oi;
    }
  }
  __shared__ float sb[32];
  __shared__ int si[32];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (lane == 0) {
    sb[warp] = best;
    si[warp] = idx;
  }
  __syncthreads();
  if (warp == 0) {
    best = lane < int(blockDim.x >> 5) ? sb[lane] : -INFINITY;
    idx = lane < int(blockDim.x >> 5) ? si[lane] : INT_MAX;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float ob = __shfl_xor_sync(0xffffffffu, best, o);
      const int oi = __shfl_xor_sync(0xffffffffu, idx, o);
      if (ob > best || (ob == best && oi < idx)) {
        best = ob;
        idx = oi;
      }
    }
    if (lane == 0) out[blockIdx.x] = idx == INT_MAX ? 0 : idx;
  }
}

}  // namespace

void init_weights(bf16* p, std::int64_t n, WeightInit init, std::uint64_t seed, std::uint32_t id,
                  cudaStream_t stream) {
  if (n <= 0) return;
  const std::int64_t blocks = std::min<std::int64_t>((n + 255) / 256, 65536);
  init_weights_k<<<unsigned(blocks), 256, 0, stream>>>(p, n, init, seed, id);
  CALIB_LAUNCH();
}

void embed_tokens(const bf16* table, const int* tokens, bf16* out, int rows, int hidden,
                  cudaStream_t stream) {
  if (rows <= 0) return;
  embed_k<<<rows, 128, 0, stream>>>(table, tokens, out, hidden);
  CALIB_LAUNCH();
}

void add_rmsnorm(bf16* resid, const bf16* delta, const bf16* w, bf16* out, int rows, int hidden, float eps,
                 cudaStream_t stream) {
  norm_dispatch(resid, delta, w, out, nullptr, rows, hidden, eps, true, stream);
}

void add_rmsnorm_amax(bf16* resid, const bf16* delta, const bf16* w, bf16* out, int rows, int hidden, float eps,
                      const int* live_rows, float* amax, cudaStream_t stream) {
  if (!live_rows || !amax) throw calib::CudaError("add_rmsnorm_amax: live_rows and amax are required");
  norm_dispatch(resid, delta, w, out, nullptr, rows, hidden, eps, true, stream, NormAmax{live_rows, amax});
}

void gather_add_rmsnorm(const bf16* resid, const bf16* delta, const int* rows, const bf16* w, bf16* out,
                        int n, int hidden, float eps, cudaStream_t stream) {
  // The kernel writes the residual only when asked; here it is read-only.
  norm_dispatch(const_cast<bf16*>(resid), delta, w, out, rows, n, hidden, eps, false, stream);
}

void rope_qkv_to_cache(const bf16* qkv, bf16* q_out, bf16* k_cache, bf16* v_cache, const int* positions,
                       const int* slots, const float2* rope, int rows, int heads, int kv_heads,
                       cudaStream_t stream) {
  if (rows <= 0) return;
  rope_cache_k<bf16><<<rows, 128, 0, stream>>>(qkv, q_out, k_cache, v_cache, positions, slots, rope, heads,
                                               kv_heads, 1.0f, 1.0f);
  CALIB_LAUNCH();
}

void rope_qkv_to_fp8_cache(const bf16* qkv, bf16* q_out, fp8* k_cache, fp8* v_cache, const int* positions,
                           const int* slots, const float2* rope, int rows, int heads, int kv_heads,
                           float k_scale, float v_scale, cudaStream_t stream) {
  if (rows <= 0) return;
  rope_cache_k<fp8><<<rows, 128, 0, stream>>>(qkv, q_out, k_cache, v_cache, positions, slots, rope, heads,
                                              kv_heads, k_scale, v_scale);
  CALIB_LAUNCH();
}

void copy_kv_blocks(void* cache, const int2* pairs, int n, int layers, std::int64_t plane_bytes,
                    std::int64_t block_bytes, cudaStream_t stream) {
  if (n <= 0) return;
  if (block_bytes % 16 != 0) throw calib::CudaError("copy_kv_blocks: block_bytes must be a multiple of 16");
  copy_blocks_k<<<dim3(unsigned(n), unsigned(2 * layers)), 256, 0, stream>>>(
      static_cast<unsigned char*>(cache), pairs, plane_bytes, block_bytes);
  CALIB_LAUNCH();
}

void init_fp8_random(fp8* p, std::int64_t n, std::uint64_t seed, std::uint32_t id, cudaStream_t stream) {
  if (n <= 0) return;
  const std::int64_t blocks = std::min<std::int64_t>((n + 255) / 256, 65536);
  init_fp8_k<<<unsigned(blocks), 256, 0, stream>>>(p, n, seed, id);
  CALIB_LAUNCH();
}

void argmax_rows(const float* logits, int* out, int rows, int vocab, cudaStream_t stream) {
  if (rows <= 0) return;
  argmax_k<<<rows, kArgmaxThreads, 0, stream>>>(logits, out, vocab);
  CALIB_LAUNCH();
}

}  // namespace infraplan::engine

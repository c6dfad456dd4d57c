// Paged-KV decode attention (one query token per sequence), GQA, split-K over the context.
// CTA = (split, kv head, sequence), 4 warps. Each half-warp takes 4 consecutive tokens per step
// (16 lanes × 8 dims = one 256-byte K or V row per token) for all G query heads sharing the KV
// head; online softmax per half-warp, then the 8 half-warps merge through shared memory. With
// several splits, partial (o, lse) go to a workspace and a second kernel merges them.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"

namespace infraplan::calib {
namespace {

constexpr int D = 128, BLK = 16, THREADS = 128, HW = THREADS / 16, U = 4;

struct alignas(16) V8 {
  __nv_bfloat162 h[4];
};

__device__ __forceinline__ void to_f32(const V8& v, float f[8]) {
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    float2 t = __bfloat1622float2(v.h[k]);
    f[2 * k] = t.x;
    f[2 * k + 1] = t.y;
  }
}

template <int G>
__global__ void __launch_bounds__(THREADS) decode_k(DecodeArgs a, float scale_log2) {
  int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  int ctx = a.context_lens[b];
  int t0 = split * a.tokens_per_split, t1 = min(ctx, t0 + a.tokens_per_split);
  int tid = threadIdx.x, hw = tid / 16, l16 = tid % 16;
  int heads = a.heads;

  float q[G][8];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    V8 v = *reinterpret_cast<const V8*>(a.q + (std::size_t(b) * heads + kvh * G + g) * D + l16 * 8);
    to_f32(v, q[g]);
  }
  float m[G], l[G], acc[G][8];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -FLT_MAX;
    l[g] = 0;
#pragma unroll
    for (int d = 0; d < 8; ++d) acc[g][d] = 0;
  }
  const int* table = a.block_table + std::size_t(b) * a.max_blocks_per_seq;
  // Loop bounds are uniform per warp (the shuffles below need all 32 lanes).
  for (int wb = t0 + (hw / 2) * 2 * U; wb < t1; wb += HW * U) {
    int base = wb + (hw % 2) * U;
    int blk = base < t1 ? table[base / BLK] : 0;
    std::size_t row0 = (std::size_t(blk) * a.kv_heads + kvh) * BLK + (base % BLK);
    V8 kv[U], vv[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (base + u < t1) {
        kv[u] = *reinterpret_cast<const V8*>(a.k_cache + (row0 + u) * D + l16 * 8);
        vv[u] = *reinterpret_cast<const V8*>(a.v_cache + (row0 + u) * D + l16 * 8);
      }
    }
    float s[G][U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float kf[8];
      to_f32(kv[u], kf);
#pragma unroll
      for (int g = 0; g < G; ++g) {
        float d0 = 0;
#pragma unroll
        for (int d = 0; d < 8; ++d) d0 = fmaf(q[g][d], kf[d], d0);
        s[g][u] = d0;
      }
    }
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int u = 0; u < U; ++u) {
        float v = s[g][u];
        v += __shfl_xor_sync(0xffffffffu, v, 8);
        v += __shfl_xor_sync(0xffffffffu, v, 4);
        v += __shfl_xor_sync(0xffffffffu, v, 2);
        v += __shfl_xor_sync(0xffffffffu, v, 1);
        s[g][u] = base + u < t1 ? v * scale_log2 : -INFINITY;
      }
#pragma unroll
    for (int g = 0; g < G; ++g) {
      float mx = m[g];
#pragma unroll
      for (int u = 0; u < U; ++u) mx = fmaxf(mx, s[g][u]);
      float alpha = exp2f(m[g] - mx);
      l[g] *= alpha;
#pragma unroll
      for (int d = 0; d < 8; ++d) acc[g][d] *= alpha;
      m[g] = mx;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (base + u >= t1) break;
      float vf[8];
      to_f32(vv[u], vf);
#pragma unroll
      for (int g = 0; g < G; ++g) {
        float p = exp2f(s[g][u] - m[g]);
        l[g] += p;
#pragma unroll
        for (int d = 0; d < 8; ++d) acc[g][d] = fmaf(p, vf[d], acc[g][d]);
      }
    }
  }
  // Merge the 8 half-warps: shared [HW][G] (m, l) and [HW][G][D] acc.
  __shared__ float sm_m[HW][G], sm_l[HW][G];
  __shared__ float sm_acc[HW][G][D];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    if (l16 == 0) {
      sm_m[hw][g] = m[g];
      sm_l[hw][g] = l[g];
    }
#pragma unroll
    for (int d = 0; d < 8; ++d) sm_acc[hw][g][l16 * 8 + d] = acc[g][d];
  }
  __syncthreads();
  for (int e = tid; e < G * D; e += THREADS) {
    int g = e / D, d = e % D;
    float M = -FLT_MAX;
#pragma unroll
    for (int i = 0; i < HW; ++i) M = fmaxf(M, sm_m[i][g]);
    float L = 0, O = 0;
#pragma unroll
    for (int i = 0; i < HW; ++i) {
      float w = exp2f(sm_m[i][g] - M);
      L += sm_l[i][g] * w;
      O += sm_acc[i][g][d] * w;
    }
    int h = kvh * G + g;
    if (gridDim.x == 1) {
      a.out[(std::size_t(b) * heads + h) * D + d] = __float2bfloat16(L > 0 ? O / L : 0.f);
    } else {
      std::size_t ps = (std::size_t(b) * heads + h) * gridDim.x + split;
      a.partial_o[ps * D + d] = L > 0 ? O / L : 0.f;
      if (d == 0) a.partial_lse[ps] = L > 0 ? M + log2f(L) : -INFINITY;
    }
  }
}

__global__ void combine_k(DecodeArgs a) {
  int bh = blockIdx.x, d = threadIdx.x;
  const float* lse = a.partial_lse + std::size_t(bh) * a.num_splits;
  float M = -INFINITY;
  for (int s = 0; s < a.num_splits; ++s) M = fmaxf(M, lse[s]);
  float L = 0, O = 0;
  for (int s = 0; s < a.num_splits; ++s) {
    if (lse[s] == -INFINITY) continue;
    float w = exp2f(lse[s] - M);
    L += w;
    O += w * a.partial_o[(std::size_t(bh) * a.num_splits + s) * D + d];
  }
  a.out[std::size_t(bh) * D + d] = __float2bfloat16(L > 0 ? O / L : 0.f);
}

template <int G>
void launch(const DecodeArgs& a, cudaStream_t stream) {
  dim3 grid(a.num_splits, a.kv_heads, a.batch);
  float scale_log2 = float(1.0 / std::sqrt(double(D)) * 1.4426950408889634);
  decode_k<G><<<grid, THREADS, 0, stream>>>(a, scale_log2);
  CALIB_LAUNCH();
  if (a.num_splits > 1) {
    combine_k<<<a.batch * a.heads, D, 0, stream>>>(a);
    CALIB_LAUNCH();
  }
}

}  // namespace

void choose_decode_splits(DecodeArgs& a, int max_context, int sms) {
  long ctas = long(a.batch) * a.kv_heads;
  int want = int((4L * sms + ctas - 1) / ctas);
  int max_splits = (max_context + 255) / 256;  // at least 256 tokens per split
  int splits = std::max(1, std::min(want, max_splits));
  int tps = (max_context + splits - 1) / splits;
  tps = (tps + 31) / 32 * 32;
  a.tokens_per_split = tps;
  a.num_splits = (max_context + tps - 1) / tps;
}

void decode_attention(const DecodeArgs& a, cudaStream_t stream) {
  if (a.head_dim != D || a.block_size != BLK)
    throw CudaError("decode_attention: head_dim must be 128 and block_size 16");
  if (a.tokens_per_split <= 0 || a.tokens_per_split % 32 != 0)
    throw CudaError("decode_attention: tokens_per_split must be a positive multiple of 32");
  if (a.kv_heads <= 0 || a.heads % a.kv_heads != 0)
    throw CudaError("decode_attention: heads must be a multiple of kv_heads");
  switch (a.heads / a.kv_heads) {
    case 1:
      launch<1>(a, stream);
      break;
    case 2:
      launch<2>(a, stream);
      break;
    case 4:
      launch<4>(a, stream);
      break;
    case 8:
      launch<8>(a, stream);
      break;
    default:
      throw CudaError("decode_attention: heads / kv_heads must be 1, 2, 4 or 8");
  }
}

}  // namespace infraplan::calib

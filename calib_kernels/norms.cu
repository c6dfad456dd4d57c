// Memory-bound transformer kernels: RMSNorm, fused SwiGLU, rotary embedding. 16-byte accesses.
#include <algorithm>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"

namespace infraplan::calib {
namespace {

struct alignas(16) Vec8 {
  __nv_bfloat162 h[4];
};

constexpr int kNormThreads = 256;
constexpr int kNormMaxChunks = 8;  // 8 × 8 elements per thread → hidden ≤ 16384

__global__ void rmsnorm_k(const bf16* __restrict__ x, const bf16* __restrict__ w, bf16* __restrict__ y,
                          int hidden, float eps) {
  const Vec8* xr = reinterpret_cast<const Vec8*>(x + std::size_t(blockIdx.x) * hidden);
  Vec8* yr = reinterpret_cast<Vec8*>(y + std::size_t(blockIdx.x) * hidden);
  const Vec8* wr = reinterpret_cast<const Vec8*>(w);
  int chunks = hidden / 8;
  Vec8 v[kNormMaxChunks];
  float ss = 0;
#pragma unroll
  for (int c = 0; c < kNormMaxChunks; ++c) {
    int idx = threadIdx.x + c * int(blockDim.x);
    if (idx < chunks) {
      v[c] = xr[idx];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        float2 f = __bfloat1622float2(v[c].h[k]);
        ss += f.x * f.x + f.y * f.y;
      }
    }
  }
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  __shared__ float sh[kNormThreads / 32];
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = ss;
  __syncthreads();
  float tot = 0;
  for (int i = 0; i < int(blockDim.x / 32); ++i) tot += sh[i];
  float r = rsqrtf(tot / float(hidden) + eps);
#pragma unroll
  for (int c = 0; c < kNormMaxChunks; ++c) {
    int idx = threadIdx.x + c * int(blockDim.x);
    if (idx < chunks) {
      Vec8 wv = wr[idx], o;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        float2 f = __bfloat1622float2(v[c].h[k]), g = __bfloat1622float2(wv.h[k]);
        o.h[k] = __floats2bfloat162_rn(f.x * r * g.x, f.y * r * g.y);
      }
      yr[idx] = o;
    }
  }
}

// grid.x covers the chunks of a row, grid.y strides over rows (no 64-bit division per element).
__global__ void swiglu_k(const bf16* __restrict__ gu, bf16* __restrict__ out, int rows, int ffn) {
  int chunks = ffn / 8;
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= chunks) return;
  for (int rr = blockIdx.y; rr < rows; rr += gridDim.y) {
    std::size_t r = std::size_t(rr);
    const Vec8* row = reinterpret_cast<const Vec8*>(gu + r * 2 * ffn);
    Vec8 g = row[c], u = row[chunks + c], o;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      float2 gf = __bfloat1622float2(g.h[k]), uf = __bfloat1622float2(u.h[k]);
      float a = gf.x / (1.f + __expf(-gf.x)) * uf.x;
      float b = gf.y / (1.f + __expf(-gf.y)) * uf.y;
      o.h[k] = __floats2bfloat162_rn(a, b);
    }
    reinterpret_cast<Vec8*>(out + r * ffn)[c] = o;
  }
}

// One thread handles 8 consecutive pairs (j .. j+7 with partners j+half ..): two 16-byte loads.
__global__ void rope_k(bf16* __restrict__ x, const int* __restrict__ pos, int tokens, int heads, int head_dim,
                       float log2_theta) {
  unsigned half = head_dim / 2, groups = half / 8;
  unsigned total = unsigned(tokens) * heads * groups;  // < 2^32 (checked by the launcher)
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
    unsigned th = i / groups;  // token * heads + head
    int g = int(i % groups);
    int t = int(th / unsigned(heads));
    bf16* base = x + std::size_t(th) * head_dim;
    Vec8* lo = reinterpret_cast<Vec8*>(base + g * 8);
    Vec8* hi = reinterpret_cast<Vec8*>(base + half + g * 8);
    Vec8 a = *lo, b = *hi, oa, ob;
    float p = float(pos[t]);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      float2 af = __bfloat1622float2(a.h[k]), bf = __bfloat1622float2(b.h[k]);
      int j0 = g * 8 + 2 * k;
      float s0, c0, s1, c1;
      __sincosf(p * exp2f(-log2_theta * float(2 * j0) / float(head_dim)), &s0, &c0);
      __sincosf(p * exp2f(-log2_theta * float(2 * (j0 + 1)) / float(head_dim)), &s1, &c1);
      oa.h[k] = __floats2bfloat162_rn(af.x * c0 - bf.x * s0, af.y * c1 - bf.y * s1);
      ob.h[k] = __floats2bfloat162_rn(bf.x * c0 + af.x * s0, bf.y * c1 + af.y * s1);
    }
    *lo = oa;
    *hi = ob;
  }
}

unsigned grid_cap(std::size_t work, int threads) {
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  std::size_t want = (work + threads - 1) / threads, cap = std::size_t(sms) * 16;
  return unsigned(want < 1 ? 1 : (want < cap ? want : cap));
}

}  // namespace

void rmsnorm(const bf16* x, const bf16* w, bf16* y, int rows, int hidden, float eps, cudaStream_t stream) {
  if (hidden % 8 != 0 || hidden > kNormThreads * kNormMaxChunks * 8)
    throw CudaError("rmsnorm: hidden must be a multiple of 8 and at most 16384");
  // Eight 16-byte chunks per thread: fewer threads per row, more rows in flight per SM.
  int threads = std::clamp((hidden / 8 + kNormMaxChunks - 1) / kNormMaxChunks, 32, kNormThreads);
  threads = (threads + 31) / 32 * 32;
  rmsnorm_k<<<rows, threads, 0, stream>>>(x, w, y, hidden, eps);
  CALIB_LAUNCH();
}

void swiglu(const bf16* gu, bf16* out, int rows, int ffn, cudaStream_t stream) {
  if (ffn % 8 != 0) throw CudaError("swiglu: ffn must be a multiple of 8");
  unsigned gx = unsigned((ffn / 8 + 255) / 256);
  unsigned gy = unsigned(std::min<long>(rows, std::max<long>(1, 2048 / long(gx))));
  swiglu_k<<<dim3(gx, gy), 256, 0, stream>>>(gu, out, rows, ffn);
  CALIB_LAUNCH();
}

void rope(bf16* x, const int* pos, int tokens, int heads, int head_dim, float theta, cudaStream_t stream) {
  if (head_dim % 16 != 0) throw CudaError("rope: head_dim must be a multiple of 16");
  std::size_t work = std::size_t(tokens) * heads * (head_dim / 16);
  if (work >= (std::size_t(1) << 32)) throw CudaError("rope: tokens × heads × head_dim / 16 must be < 2^32");
  rope_k<<<grid_cap(work, 256), 256, 0, stream>>>(x, pos, tokens, heads, head_dim, log2f(theta));
  CALIB_LAUNCH();
}

}  // namespace infraplan::calib

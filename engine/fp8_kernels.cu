// The fp8 quantization kernels (engine/fp8_kernels.hpp): 16-byte bf16 loads, a grid-stride loop,
// a warp-shuffle and shared-memory max per CTA and one atomicMax per CTA.
#include <algorithm>

#include "calib_kernels/cuda_util.hpp"
#include "engine/fp8_kernels.hpp"

namespace infraplan::engine {
namespace {

using bf16 = __nv_bfloat16;

struct alignas(16) Vec8 {
  __nv_bfloat162 h[4];
};

constexpr int kThreads = 256;
constexpr unsigned kMaxBlocks = 1024;

unsigned blocks_for(std::int64_t chunks) {
  return unsigned(std::clamp<std::int64_t>((chunks + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

/// The CTA's max of `m` (≥ 0) folded into *amax by its first thread.
__device__ void fold_max(float m, float* amax) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  __shared__ float red[kThreads / 32];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (lane == 0) red[warp] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    float b = 0.0f;
    for (int i = 0; i < int(blockDim.x >> 5); ++i) b = fmaxf(b, red[i]);
    atomicMax(reinterpret_cast<int*>(amax), __float_as_int(b));  // b ≥ 0: int order is float order
  }
}

__device__ __forceinline__ float vec_amax(const Vec8& v, float m) {
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = __bfloat1622float2(v.h[k]);
    m = fmaxf(m, fmaxf(fabsf(f.x), fabsf(f.y)));
  }
  return m;
}

__global__ void __launch_bounds__(kThreads)
    amax_k(const bf16* __restrict__ x, std::int64_t rows, std::int64_t cols,
           const int* __restrict__ live_rows, float* amax) {
  const std::int64_t live = live_rows ? std::min<std::int64_t>(*live_rows, rows) : rows;
  const std::int64_t chunks = live * cols / 8;
  const Vec8* v = reinterpret_cast<const Vec8*>(x);
  float m = 0.0f;
  for (std::int64_t c = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < chunks;
       c += std::int64_t(gridDim.x) * blockDim.x)
    m = vec_amax(v[c], m);
  fold_max(m, amax);
}

__device__ __forceinline__ float scale_of(float amax) { return amax > 0.0f ? __fdiv_rn(amax, 448.0f) : 1.0f; }

__global__ void __launch_bounds__(kThreads)
    quantize_k(const bf16* __restrict__ x, std::int64_t chunks, const float* __restrict__ amax,
               uint2* __restrict__ out, float* __restrict__ scale) {
  const float s = scale_of(*amax);
  if (blockIdx.x == 0 && threadIdx.x == 0) *scale = s;
  const Vec8* v = reinterpret_cast<const Vec8*>(x);
  for (std::int64_t c = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < chunks;
       c += std::int64_t(gridDim.x) * blockDim.x) {
    const Vec8 a = v[c];
    unsigned short q[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __bfloat1622float2(a.h[k]);
      q[k] = __nv_cvt_float2_to_fp8x2(make_float2(__fdiv_rn(f.x, s), __fdiv_rn(f.y, s)), __NV_SATFINITE,
                                      __NV_E4M3);
    }
    out[c] = make_uint2(unsigned(q[0]) | (unsigned(q[1]) << 16), unsigned(q[2]) | (unsigned(q[3]) << 16));
  }
}

__global__ void __launch_bounds__(kThreads)
    swiglu_amax_k(const bf16* __restrict__ gu, bf16* __restrict__ out, std::int64_t rows, int ffn,
                  const int* __restrict__ live_rows, float* amax) {
  const std::int64_t chunks = ffn / 8, total = rows * chunks;
  const std::int64_t live = live_rows ? std::min<std::int64_t>(*live_rows, rows) : rows;
  float m = 0.0f;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / chunks, c = i - r * chunks;
    const Vec8* p = reinterpret_cast<const Vec8*>(gu + r * 2 * ffn) + c;
    const Vec8 g = p[0], u = p[chunks];
    Vec8 o;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 gf = __bfloat1622float2(g.h[e]), uf = __bfloat1622float2(u.h[e]);
      o.h[e] = __floats2bfloat162_rn(__fdividef(gf.x, 1.f + __expf(-gf.x)) * uf.x,
                                     __fdividef(gf.y, 1.f + __expf(-gf.y)) * uf.y);
    }
    reinterpret_cast<Vec8*>(out)[i] = o;
    if (r < live) m = vec_amax(o, m);
  }
  fold_max(m, amax);
}

}  // namespace

void amax_bf16(const bf16* x, std::int64_t rows, std::int64_t cols, const int* live_rows, float* amax,
               cudaStream_t stream) {
  if (cols % 8 != 0) throw calib::CudaError("amax_bf16: cols must be a multiple of 8");
  if (rows <= 0) return;
  amax_k<<<blocks_for(rows * cols / 8), kThreads, 0, stream>>>(x, rows, cols, live_rows, amax);
  CALIB_LAUNCH();
}

void quantize_fp8(const bf16* x, std::int64_t n, const float* amax, fp8* out, float* scale,
                  cudaStream_t stream) {
  if (n % 8 != 0) throw calib::CudaError("quantize_fp8: n must be a multiple of 8");
  if (n <= 0) return;
  quantize_k<<<blocks_for(n / 8), kThreads, 0, stream>>>(x, n / 8, amax, reinterpret_cast<uint2*>(out),
                                                         scale);
  CALIB_LAUNCH();
}

void swiglu_amax(const bf16* gu, bf16* out, int rows, int ffn, const int* live_rows, float* amax,
                 cudaStream_t stream) {
  if (ffn % 8 != 0) throw calib::CudaError("swiglu_amax: ffn must be a multiple of 8");
  if (rows <= 0) return;
  swiglu_amax_k<<<blocks_for(std::int64_t(rows) * (ffn / 8)), kThreads, 0, stream>>>(gu, out, rows, ffn,
                                                                                     live_rows, amax);
  CALIB_LAUNCH();
}

}  // namespace infraplan::engine

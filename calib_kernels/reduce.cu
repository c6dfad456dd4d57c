// Reduce sum three ways: per-element global atomics, a shared-memory tree, warp shuffles with
// grid-stride float4 loads.
#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"

namespace infraplan::calib {
namespace {

__global__ void reduce_atomic_k(const float* __restrict__ x, std::size_t n, float* out) {
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) atomicAdd(out, x[i]);
}

// Harris's "first add during load": each block sums 2·blockDim elements through a tree.
__global__ void reduce_tree_k(const float* __restrict__ x, std::size_t n, float* out) {
  extern __shared__ float s[];
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) * 2 + threadIdx.x;
  float v = 0;
  if (i < n) v = x[i];
  if (i + blockDim.x < n) v += x[i + blockDim.x];
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned o = blockDim.x / 2; o > 0; o >>= 1) {
    if (threadIdx.x < o) s[threadIdx.x] += s[threadIdx.x + o];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, s[0]);
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void reduce_shfl_k(const float* __restrict__ x, std::size_t n, float* out) {
  const float4* x4 = reinterpret_cast<const float4*>(x);
  std::size_t n4 = n / 4;
  std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  float a0 = 0, a1 = 0;
  for (; i + stride < n4; i += 2 * stride) {
    float4 p = __ldg(x4 + i), q = __ldg(x4 + i + stride);
    a0 += (p.x + p.y) + (p.z + p.w);
    a1 += (q.x + q.y) + (q.z + q.w);
  }
  if (i < n4) {
    float4 p = __ldg(x4 + i);
    a0 += (p.x + p.y) + (p.z + p.w);
  }
  // Tail elements (n % 4) go to the first threads of block 0.
  if (blockIdx.x == 0 && threadIdx.x < n % 4) a1 += x[n4 * 4 + threadIdx.x];
  float v = warp_sum(a0 + a1);
  __shared__ float warps[32];
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  if (lane == 0) warps[w] = v;
  __syncthreads();
  if (w == 0) {
    v = lane < int(blockDim.x / 32) ? warps[lane] : 0.f;
    v = warp_sum(v);
    if (lane == 0) atomicAdd(out, v);
  }
}

int sm_count() {
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  return sms;
}

}  // namespace

void reduce_atomic(const float* x, std::size_t n, float* out, cudaStream_t stream) {
  CALIB_CUDA(cudaMemsetAsync(out, 0, sizeof(float), stream));
  reduce_atomic_k<<<unsigned((n + 255) / 256), 256, 0, stream>>>(x, n, out);
  CALIB_LAUNCH();
}

void reduce_smem_tree(const float* x, std::size_t n, float* out, cudaStream_t stream) {
  CALIB_CUDA(cudaMemsetAsync(out, 0, sizeof(float), stream));
  const unsigned t = 256;
  reduce_tree_k<<<unsigned((n + 2 * t - 1) / (2 * t)), t, t * sizeof(float), stream>>>(x, n, out);
  CALIB_LAUNCH();
}

void reduce_warp_shuffle(const float* x, std::size_t n, float* out, cudaStream_t stream) {
  CALIB_CUDA(cudaMemsetAsync(out, 0, sizeof(float), stream));
  // Requires x 16-byte aligned (cudaMalloc guarantees 256).
  std::size_t want = (n / 4 + 511) / 512;
  std::size_t cap = std::size_t(sm_count()) * 8;
  unsigned blocks = unsigned(want < 1 ? 1 : (want < cap ? want : cap));
  reduce_shfl_k<<<blocks, 512, 0, stream>>>(x, n, out);
  CALIB_LAUNCH();
}

}  // namespace infraplan::calib

// Row softmax in fp32: naive three passes vs the online normaliser (max and sum in one pass).
#include <cfloat>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"

namespace infraplan::calib {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float block_reduce(float v, bool is_max, float* sh) {
  for (int o = 16; o > 0; o >>= 1) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) sh[wid] = v;
  __syncthreads();
  v = sh[0];
  for (int i = 1; i < kThreads / 32; ++i) v = is_max ? fmaxf(v, sh[i]) : v + sh[i];
  return v;
}

__global__ void softmax_naive_k(const float* __restrict__ x, float* __restrict__ y, int cols) {
  __shared__ float sh[32];
  const float* row = x + std::size_t(blockIdx.x) * cols;
  float* out = y + std::size_t(blockIdx.x) * cols;
  float m = -FLT_MAX;
  for (int j = threadIdx.x; j < cols; j += kThreads) m = fmaxf(m, row[j]);
  m = block_reduce(m, true, sh);
  float s = 0;
  for (int j = threadIdx.x; j < cols; j += kThreads) s += __expf(row[j] - m);
  s = block_reduce(s, false, sh);
  float inv = 1.f / s;
  for (int j = threadIdx.x; j < cols; j += kThreads) out[j] = __expf(row[j] - m) * inv;
}

__device__ __forceinline__ void online_merge(float& m, float& d, float m2, float d2) {
  float mn = fmaxf(m, m2);
  d = (m == -FLT_MAX ? 0.f : d * __expf(m - mn)) + (m2 == -FLT_MAX ? 0.f : d2 * __expf(m2 - mn));
  m = mn;
}

__global__ void softmax_online_k(const float* __restrict__ x, float* __restrict__ y, int cols) {
  __shared__ float shm[32], shd[32];
  const float* row = x + std::size_t(blockIdx.x) * cols;
  float* out = y + std::size_t(blockIdx.x) * cols;
  float m = -FLT_MAX, d = 0;
  for (int j = threadIdx.x; j < cols; j += kThreads) {
    float v = row[j];
    float mn = fmaxf(m, v);
    d = d * __expf(m - mn) + __expf(v - mn);
    m = mn;
  }
  for (int o = 16; o > 0; o >>= 1) {
    float m2 = __shfl_xor_sync(0xffffffffu, m, o), d2 = __shfl_xor_sync(0xffffffffu, d, o);
    online_merge(m, d, m2, d2);
  }
  int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  if (lane == 0) {
    shm[wid] = m;
    shd[wid] = d;
  }
  __syncthreads();
  m = shm[0];
  d = shd[0];
  for (int i = 1; i < kThreads / 32; ++i) online_merge(m, d, shm[i], shd[i]);
  float inv = 1.f / d;
  for (int j = threadIdx.x; j < cols; j += kThreads) out[j] = __expf(row[j] - m) * inv;
}

}  // namespace

void softmax_naive(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
  softmax_naive_k<<<rows, kThreads, 0, stream>>>(x, y, cols);
  CALIB_LAUNCH();
}

void softmax_online(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
  softmax_online_k<<<rows, kThreads, 0, stream>>>(x, y, cols);
  CALIB_LAUNCH();
}

}  // namespace infraplan::calib

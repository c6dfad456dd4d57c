// Bandwidth probes: device copy, read-only streaming, and an empty kernel for launch overhead.
#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"

namespace infraplan::calib {
namespace {

int grid_for(std::size_t n4, int threads, int per_sm = 8) {
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  std::size_t want = (n4 + threads - 1) / threads;
  std::size_t cap = std::size_t(sms) * per_sm;
  return int(want < cap ? want : cap);
}

__global__ void copy_f4(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n4) {
  std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  // Four independent 16-byte loads in flight per thread.
  for (; i + 3 * stride < n4; i += 4 * stride) {
    float4 a = in[i], b = in[i + stride], c = in[i + 2 * stride], d = in[i + 3 * stride];
    out[i] = a;
    out[i + stride] = b;
    out[i + 2 * stride] = c;
    out[i + 3 * stride] = d;
  }
  for (; i < n4; i += stride) out[i] = in[i];
}

__global__ void read_f4(const float4* __restrict__ in, std::size_t n4, float* sink) {
  std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  float acc = 0;
  for (; i + 3 * stride < n4; i += 4 * stride) {
    float4 a = __ldg(in + i), b = __ldg(in + i + stride), c = __ldg(in + i + 2 * stride),
           d = __ldg(in + i + 3 * stride);
    acc +=
        (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) + (c.x + c.y + c.z + c.w) + (d.x + d.y + d.z + d.w);
  }
  for (; i < n4; i += stride) {
    float4 a = __ldg(in + i);
    acc += a.x + a.y + a.z + a.w;
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (threadIdx.x == 0) sink[blockIdx.x % 4096] = acc;
}

__global__ void nothing() {}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread counts its multiprocessor's cycles between two edges of the global nanosecond timer
// (whose ticks may be coarse): the first read after an edge starts the window, the first read at or
// past start + window_ns ends it, so the error is one loop iteration, not one tick.
__global__ void clock_meter_k(unsigned long long* out, unsigned window_ns) {
  if (threadIdx.x != 0) return;
  const unsigned long long t_prev = global_ns();
  unsigned long long t0 = t_prev;
  while (t0 == t_prev) t0 = global_ns();
  const long long c0 = clock64();
  unsigned long long t1 = t0;
  while (t1 < t0 + window_ns) t1 = global_ns();
  const long long c1 = clock64();
  out[0] = static_cast<unsigned long long>(c1 - c0);
  out[1] = t1 - t0;
}

// Every block waits `ns` of the global timer: a kernel of known duration that occupies the whole
// GPU, whatever the clock.
__global__ void wait_ns_k(unsigned ns) {
  if (threadIdx.x != 0) return;
  const unsigned long long t0 = global_ns();
  while (global_ns() < t0 + ns) {
  }
}

}  // namespace

void wait_kernel(unsigned ns, int blocks, cudaStream_t stream) {
  wait_ns_k<<<blocks, 128, 0, stream>>>(ns);
  CALIB_LAUNCH();
}

void copy_kernel(const float4* in, float4* out, std::size_t n4, cudaStream_t stream, int blocks_per_sm) {
  copy_f4<<<grid_for(n4, 256, blocks_per_sm), 256, 0, stream>>>(in, out, n4);
  CALIB_LAUNCH();
}

void read_kernel(const float4* in, std::size_t n4, float* sink, cudaStream_t stream) {
  read_f4<<<grid_for(n4, 256), 256, 0, stream>>>(in, n4, sink);
  CALIB_LAUNCH();
}

void empty_kernel(cudaStream_t stream) {
  nothing<<<1, 32, 0, stream>>>();
  CALIB_LAUNCH();
}

void clock_meter(unsigned long long* out, unsigned window_ns, cudaStream_t stream) {
  clock_meter_k<<<1, 32, 0, stream>>>(out, window_ns);
  CALIB_LAUNCH();
}

}  // namespace infraplan::calib

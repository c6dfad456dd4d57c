// Deterministic random fill (a counter-based hash, so the result does not depend on the launch shape).
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"

namespace infraplan::calib {
namespace {

__device__ __forceinline__ std::uint64_t mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__global__ void fill_kernel(void* p, std::size_t n, Elem e, std::uint64_t seed, float scale, bool normal) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint64_t h = mix(seed * 0x100000001B3ull + i);
    float u = float(h >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;  // [-1, 1)
    if (normal) {
      // Box-Muller from the hash's two 24-bit halves: u1 in (0, 1], u2 in [0, 1).
      float u1 = (float(h >> 40) + 1.0f) * (1.0f / 16777216.0f);
      float u2 = float((h >> 8) & 0xFFFFFFull) * (1.0f / 16777216.0f);
      u = fminf(6.0f, fmaxf(-6.0f, sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2)));
    }
    float v = u * scale;
    switch (e) {
      case Elem::F32:
        static_cast<float*>(p)[i] = v;
        break;
      case Elem::BF16:
        static_cast<bf16*>(p)[i] = __float2bfloat16(v);
        break;
      case Elem::F16:
        static_cast<__half*>(p)[i] = __float2half(v);
        break;
      case Elem::FP8E4M3:
        static_cast<__nv_fp8_e4m3*>(p)[i] = __nv_fp8_e4m3(v);
        break;
      case Elem::INT8:
        static_cast<std::int8_t*>(p)[i] = std::int8_t(lrintf(fminf(127.0f, fmaxf(-127.0f, v))));
        break;
      case Elem::I32:
        static_cast<std::int32_t*>(p)[i] = std::int32_t(lrintf(v));
        break;
    }
  }
}

}  // namespace

const char* fill_distribution_name(FillDistribution d) {
  return d == FillDistribution::Normal ? "normal" : "uniform";
}

void fill_random(void* p, std::size_t n, Elem e, std::uint64_t seed, float scale, cudaStream_t stream,
                 FillDistribution dist) {
  if (n == 0) return;
  std::size_t blocks = (n + 255) / 256;
  if (blocks > 65536) blocks = 65536;
  fill_kernel<<<unsigned(blocks), 256, 0, stream>>>(p, n, e, seed, scale, dist == FillDistribution::Normal);
  CALIB_LAUNCH();
}

}  // namespace infraplan::calib

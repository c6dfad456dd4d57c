#pragma once
// Seeded random weights, the same bits on the host and on the GPU: value i of tensor `id` is
// offset + scale · u with u uniform in [−1, 1) from a 64-bit hash of (seed, id, i), rounded to
// bf16 (round to nearest even). The GPU fills a 7B model in milliseconds; a host reference model
// of a small shape regenerates exactly the same weights. Header-only, usable from .cpp and .cu.
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define INFRAPLAN_HD __host__ __device__ __forceinline__
#else
#define INFRAPLAN_HD inline
#endif

namespace infraplan::engine {

/// How a tensor starts: value = offset + scale · u, u uniform in [−1, 1).
struct WeightInit {
  float offset = 0;  ///< 1 for norm weights, 0 otherwise
  float scale = 0;   ///< half-width of the uniform distribution
};

INFRAPLAN_HD std::uint64_t weight_hash(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// u in [−1, 1) with 24 random bits (exact in float).
INFRAPLAN_HD float weight_uniform(std::uint64_t seed, std::uint32_t id, std::uint64_t i) {
  const std::uint64_t h = weight_hash((seed * 0x9E3779B97F4A7C15ULL) ^ (std::uint64_t(id) << 40) ^ i);
  const std::int32_t v = std::int32_t(h >> 40) - (1 << 23);
  return float(v) * (1.0f / 8388608.0f);
}

/// offset + scale · u in float, without a fused multiply-add (so host and device agree).
INFRAPLAN_HD float weight_value(WeightInit w, std::uint64_t seed, std::uint32_t id, std::uint64_t i) {
  const float u = weight_uniform(seed, id, i);
#if defined(__CUDA_ARCH__)
  return __fadd_rn(w.offset, __fmul_rn(w.scale, u));
#else
  return w.offset + w.scale * u;
#endif
}

/// float → bf16 bits, round to nearest even (NaN stays NaN).
INFRAPLAN_HD std::uint16_t bf16_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return std::uint16_t(u >> 16);
}

/// bf16 bits → float (exact).
INFRAPLAN_HD float bf16_value(std::uint16_t b) {
  const std::uint32_t u = std::uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// f rounded to the nearest bf16, as a float.
INFRAPLAN_HD float round_bf16(float f) { return bf16_value(bf16_bits(f)); }

}  // namespace infraplan::engine

#pragma once
// FP8 E4M3 codes widened to bf16 on the GPU, exactly: E4M3's 3 mantissa bits and exponents
// 2⁻⁹ … 2⁸ are all representable in bf16.
// Used by the attention kernels that read an fp8 KV cache; they apply the cache's scales to the
// scores and outputs in fp32, not to the widened values.
#include <cuda_bf16.h>

#include <cstdint>
#include <cstring>

namespace infraplan::calib {

/// Two E4M3 codes (low byte first) as a bf16 pair. A code's sign, exponent and mantissa bits
/// moved into bf16's fields (sign to bit 15, the 7 other bits to bits 4–10) make a bf16 of value ×
/// 2⁻¹²⁰ exactly — E4M3's exponent bias is 7, bf16's 127, and E4M3's subnormals land on bf16's
/// subnormals with the same factor — and a bf16 multiply by 2¹²⁰ (exact; half-precision
/// arithmetic keeps subnormals) restores the value. Byte permute, logic ops and one bf16x2
/// multiply: the hardware conversion (e4m3x2 → f16x2 → f32 → bf16x2) goes through the
/// conversion unit, whose 16 results per clock and multiprocessor made the attention kernels
/// conversion-bound (H200, 2026-12-02: fp8 decode attention no faster than bf16's).
__device__ __forceinline__ __nv_bfloat162 e4m3x2_to_bf16x2(unsigned v) {
  const unsigned x = __byte_perm(v, 0u, 0x1404u);  // byte 1 of v to bits 24–31, byte 0 to bits 8–15
  const unsigned bits = (x & 0x80008000u) | ((x & 0x7F007F00u) >> 4);
  __nv_bfloat162 r;
  static_assert(sizeof(r) == sizeof(bits));
  memcpy(&r, &bits, sizeof(bits));
  return __hmul2(r, __nv_bfloat162(__float2bfloat16_rn(0x1p120f), __float2bfloat16_rn(0x1p120f)));
}

/// 16 E4M3 codes (16 bytes) as 16 bf16 values: out[0] gets codes 0–7, out[1] codes 8–15.
__device__ __forceinline__ void e4m3x16_to_bf16(const uint4& in, uint4 (&out)[2]) {
  const unsigned w[4] = {in.x, in.y, in.z, in.w};
  unsigned o[8];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __nv_bfloat162 lo = e4m3x2_to_bf16x2(w[i]), hi = e4m3x2_to_bf16x2(w[i] >> 16);
    o[2 * i] = *reinterpret_cast<const unsigned*>(&lo);
    o[2 * i + 1] = *reinterpret_cast<const unsigned*>(&hi);
  }
  out[0] = make_uint4(o[0], o[1], o[2], o[3]);
  out[1] = make_uint4(o[4], o[5], o[6], o[7]);
}

}  // namespace infraplan::calib

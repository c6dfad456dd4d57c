#pragma once
// FP8 E4M3 codes widened to bf16 on the GPU, exactly: E4M3's 3 mantissa bits and exponents
// 2⁻⁹ … 2⁸ are all representable in bf16 (and in half, through which the hardware converts).
// Used by the attention kernels that read an fp8 KV cache; they apply the cache's scales to the
// scores and outputs in fp32, not to the widened values.
// Placing a code's bits in bf16's fields (a bf16 of value × 2⁻¹²⁰) and multiplying by 2¹²⁰, on the
// integer and FMA pipes instead of the conversion unit, gave the same bits and a 5% slower fp8
// decode attention on the H200 (docs/serving.md, "fp8 KV cache"): the kernels are bound by
// instruction issue there, not by this conversion's unit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

namespace infraplan::calib {

/// Two E4M3 codes (low byte first) as a bf16 pair.
__device__ __forceinline__ __nv_bfloat162 e4m3x2_to_bf16x2(unsigned v) {
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(v & 0xFFFFu), __NV_E4M3);
  const float2 f = __half22float2(__half2(h));
  return __floats2bfloat162_rn(f.x, f.y);
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

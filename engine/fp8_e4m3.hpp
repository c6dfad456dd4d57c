#pragma once
// FP8 E4M3 ("e4m3fn": 1 sign, 4 exponent bits of bias 7, 3 mantissa bits; no infinities, one NaN
// pattern per sign, 0x7F / 0xFF; largest finite 448, smallest normal 2⁻⁶, smallest subnormal 2⁻⁹)
// on the host, as the engine's fp8 (W8A8) path uses it: conversion from float rounds to the
// nearest value, ties to even, and saturates to ±448 (what the GPU's cvt.rn.satfinite.e4m3x2.f32
// does; NaN stays NaN); per-tensor scales are amax / 448, so that the tensor's largest magnitude
// maps onto the format's largest finite value. The reference model and the tests use these to
// emulate the GPU's quantization exactly. CUDA-free, header-only.
#include <cmath>
#include <cstdint>
#include <vector>

namespace infraplan::engine {

constexpr float kFp8E4M3Max = 448.0f;  ///< largest finite E4M3 value

/// float → E4M3 bits: round to nearest, ties to even; |x| ≥ 448 (and ±inf) saturate to ±448
/// (0x7E / 0xFE); NaN → 0x7F (sign kept); a result that rounds to zero keeps the sign of x.
inline std::uint8_t fp8_e4m3_bits(float x) {
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x)) return std::uint8_t(sign | 0x7F);
  const float a = std::fabs(x);
  if (a >= kFp8E4M3Max) return std::uint8_t(sign | 0x7E);
  // Below 2⁻⁶ the grid is uniform with step 2⁻⁹ (subnormals); above, 8 steps per binade.
  int e = 0;
  if (a >= 0x1p-6f) {
    (void)std::frexp(a, &e);  // a = f · 2^e, f in [0.5, 1)
    e -= 1;                   // a = 1.m · 2^e, e in [−6, 8]
  } else {
    e = -6;
  }
  const float steps = std::ldexp(a, 3 - e);  // a in units of the grid step 2^(e − 3); exact
  float q = std::floor(steps);
  const float frac = steps - q;
  if (frac > 0.5f || (frac == 0.5f && std::fmod(q, 2.0f) != 0.0f)) q += 1.0f;
  // q in [0, 16]: subnormals (e = −6, q < 8) encode q directly; 8 ≤ q < 16 is the binade's
  // mantissa 1.m; q = 16 carries into the next binade.
  int qi = int(q), exp_field = e + 7;
  if (e == -6 && qi < 8) return std::uint8_t(sign | qi);
  if (qi == 16) {
    qi = 8;
    ++exp_field;
  }
  const int bits = (exp_field << 3) | (qi - 8);
  return std::uint8_t(sign | (bits > 0x7E ? 0x7E : bits));
}

/// E4M3 bits → float (exact; 0x7F / 0xFF → NaN).
inline float fp8_e4m3_value(std::uint8_t b) {
  const float sign = (b & 0x80) ? -1.0f : 1.0f;
  const int exp_field = (b >> 3) & 0xF, man = b & 0x7;
  if (exp_field == 0xF && man == 0x7) return std::nanf("");
  if (exp_field == 0) return sign * std::ldexp(float(man), -9);
  return sign * std::ldexp(float(8 + man), exp_field - 7 - 3);
}

/// The per-tensor scale of a tensor whose largest magnitude is `amax`: amax / 448 (fp32,
/// rounded to nearest), or 1 for an all-zero tensor. Dequantized value = E4M3 value · scale.
inline float fp8_scale_for_amax(float amax) { return amax > 0.0f ? amax / kFp8E4M3Max : 1.0f; }

/// x quantized with `scale`: the E4M3 bits of the fp32 quotient x / scale.
inline std::uint8_t fp8_quantize(float x, float scale) { return fp8_e4m3_bits(x / scale); }

/// A tensor quantized to E4M3 with one scale.
struct Fp8Tensor {
  std::vector<std::uint8_t> bits;  ///< E4M3 bits, one per element
  float scale = 1.0f;              ///< dequantization scale (amax / 448)
};

/// Quantizes `n` values with the scale of their largest magnitude.
inline Fp8Tensor fp8_quantize_tensor(const float* x, std::size_t n) {
  float amax = 0.0f;
  for (std::size_t i = 0; i < n; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  Fp8Tensor t;
  t.scale = fp8_scale_for_amax(amax);
  t.bits.resize(n);
  for (std::size_t i = 0; i < n; ++i) t.bits[i] = fp8_quantize(x[i], t.scale);
  return t;
}

}  // namespace infraplan::engine

// The host E4M3 conversion against values worked out by hand from the format (1 sign bit,
// 4 exponent bits of bias 7, 3 mantissa bits; 0x7F NaN; largest 448; subnormals k · 2⁻⁹).
#include "engine/fp8_e4m3.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace infraplan::engine;

TEST(Fp8E4M3, KnownValues) {
  EXPECT_EQ(fp8_e4m3_bits(0.0f), 0x00);
  EXPECT_EQ(fp8_e4m3_bits(-0.0f), 0x80);
  EXPECT_EQ(fp8_e4m3_bits(1.0f), 0x38);  // exponent 7 (bias 7), mantissa 0
  EXPECT_EQ(fp8_e4m3_bits(-1.0f), 0xB8);
  EXPECT_EQ(fp8_e4m3_bits(1.125f), 0x39);  // 1 + 1/8
  EXPECT_EQ(fp8_e4m3_bits(1.75f), 0x3E);
  EXPECT_EQ(fp8_e4m3_bits(2.0f), 0x40);
  EXPECT_EQ(fp8_e4m3_bits(0.5f), 0x30);
  EXPECT_EQ(fp8_e4m3_bits(240.0f), 0x77);  // 1.875 · 2⁷
  EXPECT_EQ(fp8_e4m3_bits(256.0f), 0x78);
  EXPECT_EQ(fp8_e4m3_bits(448.0f), 0x7E);  // 1.75 · 2⁸, the largest finite value
  EXPECT_EQ(fp8_e4m3_bits(-448.0f), 0xFE);
  EXPECT_EQ(fp8_e4m3_bits(0x1p-6f), 0x08);  // smallest normal
  EXPECT_FLOAT_EQ(fp8_e4m3_value(0x7E), 448.0f);
  EXPECT_FLOAT_EQ(fp8_e4m3_value(0xFE), -448.0f);
  EXPECT_FLOAT_EQ(fp8_e4m3_value(0x38), 1.0f);
  EXPECT_FLOAT_EQ(fp8_e4m3_value(0x01), 0x1p-9f);
  EXPECT_FLOAT_EQ(fp8_e4m3_value(0x07), 7 * 0x1p-9f);
  EXPECT_TRUE(std::isnan(fp8_e4m3_value(0x7F)));
  EXPECT_TRUE(std::isnan(fp8_e4m3_value(0xFF)));
}

TEST(Fp8E4M3, RoundsToNearestTiesToEven) {
  EXPECT_EQ(fp8_e4m3_bits(1.0625f), 0x38);   // halfway 1 | 1.125: to the even mantissa 0
  EXPECT_EQ(fp8_e4m3_bits(1.1875f), 0x3A);   // halfway 1.125 | 1.25: to the even mantissa 2
  EXPECT_EQ(fp8_e4m3_bits(1.0626f), 0x39);   // just above the tie
  EXPECT_EQ(fp8_e4m3_bits(1.0624f), 0x38);   // just below
  EXPECT_EQ(fp8_e4m3_bits(1.9375f), 0x40);   // halfway 1.875 | 2: carries into the next binade
  EXPECT_EQ(fp8_e4m3_bits(-1.1875f), 0xBA);  // the same for negatives
  EXPECT_EQ(fp8_e4m3_bits(0.3f), 0x2A);      // 0.3 = 1.2 · 2⁻²: nearest 1.25 · 2⁻² = 0.3125
}

TEST(Fp8E4M3, SaturatesAt448) {
  EXPECT_EQ(fp8_e4m3_bits(449.0f), 0x7E);
  EXPECT_EQ(fp8_e4m3_bits(463.9f), 0x7E);  // would round to 448 anyway
  EXPECT_EQ(fp8_e4m3_bits(464.0f), 0x7E);  // the tie with the non-existent 480: saturates
  EXPECT_EQ(fp8_e4m3_bits(1e6f), 0x7E);
  EXPECT_EQ(fp8_e4m3_bits(-1e30f), 0xFE);
  EXPECT_EQ(fp8_e4m3_bits(std::numeric_limits<float>::infinity()), 0x7E);
  EXPECT_EQ(fp8_e4m3_bits(-std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(fp8_e4m3_bits(std::nanf("")) & 0x7F, 0x7F);
}

TEST(Fp8E4M3, Subnormals) {
  EXPECT_EQ(fp8_e4m3_bits(0x1p-9f), 0x01);  // smallest subnormal
  EXPECT_EQ(fp8_e4m3_bits(3 * 0x1p-9f), 0x03);
  EXPECT_EQ(fp8_e4m3_bits(7 * 0x1p-9f), 0x07);     // largest subnormal
  EXPECT_EQ(fp8_e4m3_bits(7.5f * 0x1p-9f), 0x08);  // tie 7 | 8 (= 2⁻⁶, normal): to even
  EXPECT_EQ(fp8_e4m3_bits(0x1p-10f), 0x00);        // tie 0 | 1: to even, zero
  EXPECT_EQ(fp8_e4m3_bits(1.5f * 0x1p-9f), 0x02);  // tie 1 | 2: to even
  EXPECT_EQ(fp8_e4m3_bits(2.5f * 0x1p-9f), 0x02);  // tie 2 | 3: to even
  EXPECT_EQ(fp8_e4m3_bits(0x1.1p-10f), 0x01);      // just above half the smallest
  EXPECT_EQ(fp8_e4m3_bits(-0x1p-12f), 0x80);       // underflow keeps the sign
  EXPECT_EQ(fp8_e4m3_bits(-3 * 0x1p-9f), 0x83);
}

TEST(Fp8E4M3, EveryFiniteCodeRoundTrips) {
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7F) == 0x7F) continue;  // NaN
    const float v = fp8_e4m3_value(std::uint8_t(b));
    EXPECT_EQ(fp8_e4m3_bits(v), b) << "code " << b << " value " << v;
  }
  // Values are strictly increasing over the positive codes 0x00 … 0x7E.
  for (int b = 1; b <= 0x7E; ++b)
    EXPECT_LT(fp8_e4m3_value(std::uint8_t(b - 1)), fp8_e4m3_value(std::uint8_t(b)));
}

TEST(Fp8E4M3, NearestOfAllCodes) {
  // Against a brute-force nearest over all 253 non-negative finite codes (ties to the even code)
  // on a sweep of magnitudes from far below the subnormals to beyond the saturation point.
  for (float x = 1e-4f; x < 600.0f; x *= 1.0137f) {
    int best = 0;
    for (int b = 1; b <= 0x7E; ++b) {
      const float d = std::fabs(fp8_e4m3_value(std::uint8_t(b)) - x);
      const float db = std::fabs(fp8_e4m3_value(std::uint8_t(best)) - x);
      if (d < db || (d == db && b % 2 == 0)) best = b;
    }
    EXPECT_EQ(fp8_e4m3_bits(x), best) << x;
    EXPECT_EQ(fp8_e4m3_bits(-x), best | 0x80) << -x;
  }
}

TEST(Fp8E4M3, PerTensorScale) {
  EXPECT_FLOAT_EQ(fp8_scale_for_amax(448.0f), 1.0f);
  EXPECT_FLOAT_EQ(fp8_scale_for_amax(0.0f), 1.0f);  // an all-zero tensor
  EXPECT_FLOAT_EQ(fp8_scale_for_amax(3.5f), 3.5f / 448.0f);
  const float x[5] = {0.25f, -3.5f, 1.0f, 0.0f, 3.4f};
  const Fp8Tensor t = fp8_quantize_tensor(x, 5);
  EXPECT_FLOAT_EQ(t.scale, 3.5f / 448.0f);
  EXPECT_EQ(t.bits[1], 0xFE);  // the largest magnitude maps to −448
  EXPECT_EQ(t.bits[3], 0x00);
  for (int i = 0; i < 5; ++i) {
    const float back = fp8_e4m3_value(t.bits[std::size_t(i)]) * t.scale;
    EXPECT_NEAR(back, x[i], std::fabs(x[i]) / 16 + 1e-6f) << i;  // within half a step (3 mantissa bits)
  }
}

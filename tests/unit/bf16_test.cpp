// bf16 conversions (spec §4.1): round-to-nearest-even on the bit pattern, every NaN -> 0x7fc0.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>

#include "naive_reference.hpp"
#include "numerics/bf16.hpp"
#include "numerics/tiled_layout.hpp"

namespace taconite::numerics {
namespace {

bf16_t from_bits(std::uint32_t bits) { return f32_to_bf16(std::bit_cast<float>(bits)); }

TEST(Bf16, WidensByShifting) {
  EXPECT_EQ(std::bit_cast<std::uint32_t>(bf16_to_f32(0x3f80)), 0x3f800000u);
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0xc040), -3.0f);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(bf16_to_f32(0x8000)), 0x80000000u);
}

TEST(Bf16, ExactValuesConvertUnchanged) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_bf16(260.0f), 0x4382);
}

TEST(Bf16, TiesRoundToEven) {
  EXPECT_EQ(from_bits(0x3f808000u), 0x3f80);  // 1 + 2^-8: halfway, 0x3f80 is even -> down
  EXPECT_EQ(from_bits(0x3f818000u), 0x3f82);  // halfway between 0x3f81 (odd) and 0x3f82 -> up
  EXPECT_EQ(from_bits(0xbf808000u), 0xbf80);  // negative tie, even -> toward zero
  EXPECT_EQ(from_bits(0xbf818000u), 0xbf82);  // negative tie, odd -> away from zero
  EXPECT_EQ(f32_to_bf16(259.0f), 0x4382);     // 259 lies between 258 (odd mantissa) and 260 -> 260
  EXPECT_EQ(f32_to_bf16(257.0f), 0x4380);     // between 256 (even) and 258 -> 256
}

TEST(Bf16, NonTiesRoundToNearest) {
  EXPECT_EQ(from_bits(0x3f808001u), 0x3f81);  // just above halfway -> up
  EXPECT_EQ(from_bits(0x3f807fffu), 0x3f80);  // just below halfway -> down
  EXPECT_EQ(from_bits(0x3f81ffffu), 0x3f82);
}

TEST(Bf16, RoundingCarriesIntoTheExponent) {
  EXPECT_EQ(from_bits(0x3fff8000u), 0x4000);  // 1.99609375 + half ulp, odd -> 2.0
  EXPECT_EQ(from_bits(0x3fffffffu), 0x4000);
  EXPECT_EQ(from_bits(0x7f7fffffu), 0x7f80);  // FLT_MAX rounds to +inf
  EXPECT_EQ(from_bits(0xff7fffffu), 0xff80);  // -FLT_MAX rounds to -inf
}

TEST(Bf16, NanBecomesCanonicalQuietNan) {
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()), 0x7fc0);
  EXPECT_EQ(from_bits(0x7f800001u), 0x7fc0);  // signalling NaN; plain rounding would make it inf
  EXPECT_EQ(from_bits(0x7fffffffu), 0x7fc0);  // all-ones payload; plain rounding would wrap to 0x8000
  EXPECT_EQ(from_bits(0xffc00000u), 0x7fc0);  // negative NaN
  EXPECT_EQ(from_bits(0xff800001u), 0x7fc0);
}

TEST(Bf16, InfinityStaysInfinity) {
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(f32_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
}

TEST(Bf16, SignedZerosAndDenormals) {
  EXPECT_EQ(f32_to_bf16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(from_bits(0x00008000u), 0x0000);  // denormal tie to even
  EXPECT_EQ(from_bits(0x00018000u), 0x0002);
  EXPECT_EQ(from_bits(0x80008001u), 0x8001);
}

TEST(Bf16, EveryBf16ValueRoundTrips) {
  for (std::uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    const auto b = static_cast<bf16_t>(bits);
    const bool nan = (bits & 0x7fffu) > 0x7f80u;
    EXPECT_EQ(f32_to_bf16(bf16_to_f32(b)), nan ? bf16_t{0x7fc0} : b) << std::hex << bits;
  }
}

// The runtime's bit trick agrees with an independent frexp/nearbyint rounding on ordinary values.
TEST(Bf16, AgreesWithIndependentRounding) {
  std::uint32_t state = 12345;
  for (int n = 0; n < 200000; ++n) {
    state = state * 1664525u + 1013904223u;
    const std::uint32_t bits = (state & 0x807fffffu) | ((100u + (state >> 24) % 56u) << 23);  // normal, |x| ~ 2^-27..2^28
    const float value = std::bit_cast<float>(bits);
    EXPECT_EQ(bf16_to_f32(f32_to_bf16(value)), testing::naive_round_bf16(value)) << std::hex << bits;
  }
}

TEST(TiledLayout, MatchesSpecFormula) {
  // ((y * (C/8) + ch/8) * W + x) * 8 + (ch % 8), written out for C=24, W=5.
  EXPECT_EQ(tiled_index(24, 5, 0, 0, 0), 0u);
  EXPECT_EQ(tiled_index(24, 5, 7, 0, 0), 7u);
  EXPECT_EQ(tiled_index(24, 5, 8, 0, 0), 40u);       // next channel group: skip one row of W*8
  EXPECT_EQ(tiled_index(24, 5, 0, 0, 1), 8u);
  EXPECT_EQ(tiled_index(24, 5, 0, 1, 0), 120u);      // next row: all 3 groups * 5 * 8
  EXPECT_EQ(tiled_index(24, 5, 19, 2, 3), ((2u * 3 + 2) * 5 + 3) * 8 + 3);
}

}  // namespace
}  // namespace taconite::numerics

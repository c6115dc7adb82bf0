// The exact host glue of spec §4.1 / §5.1 / §6, checked against hand-computed values.
// Values are chosen so a formula with one rounding fewer (or an FMA) would give another answer.
#include <gtest/gtest.h>

#include <bit>
#include <vector>

#include "numerics/bf16.hpp"
#include "numerics/host_glue.hpp"

namespace taconite::numerics {
namespace {

bf16_t bf(float v) { return f32_to_bf16(v); }  // v must be bf16-exact where it is an input
float f(bf16_t v) { return bf16_to_f32(v); }

// A one-pixel-wide buffer of 8 channels: tiled index == channel.
constexpr TiledShape kPixel{8, 1, 1};

TEST(HostGlue, AffineRoundsTheSumToF32BeforeBf16) {
  // 7*37 = 259 exactly; 259 - 2^-20 rounds to 259.0f (f32 ulp there is 2^-15), a bf16 tie
  // between 258 and 260 that goes to the even 260. Rounding 259 - 2^-20 straight to bf16 gives 258.
  const float tiny = std::bit_cast<float>(0x35800000u);  // 2^-20, bf16-exact
  ASSERT_EQ(f(bf(tiny)), tiny);
  std::vector<bf16_t> in(8, bf(7.0f)), out(8), scale(8, bf(37.0f)), shift(8, bf(-tiny));
  affine(in, out, kPixel, scale, shift);
  EXPECT_EQ(f(out[0]), 260.0f);
  EXPECT_EQ(out[0], 0x4382);
}

TEST(HostGlue, AffineIsPerChannelAndMayRunInPlace) {
  std::vector<bf16_t> buf(16), scale(8), shift(8);
  for (int i = 0; i < 16; ++i) buf[i] = bf(static_cast<float>(i % 8 + 1));      // x = channel + 1
  for (int c = 0; c < 8; ++c) scale[c] = bf(static_cast<float>(c)), shift[c] = bf(0.5f);
  affine(buf, buf, {8, 1, 2}, scale, shift);
  for (int i = 0; i < 16; ++i) {
    const int c = i % 8;
    EXPECT_EQ(f(buf[i]), static_cast<float>((c + 1) * c) + 0.5f) << i;
  }
}

TEST(HostGlue, PreluBiasRoundsTheBiasedValueFirst) {
  // t = bf16(-256 + -3) = bf16(-259) = -260 (tie to even); 3 * -260 = -780 (bf16-exact).
  // Without the intermediate rounding: 3 * -259 = -777 -> bf16 -776.
  std::vector<bf16_t> buf(8, bf(-256.0f)), alpha(8, bf(3.0f)), bias(8, bf(-3.0f));
  prelu_bias(buf, kPixel, alpha, bias);
  EXPECT_EQ(f(buf[0]), -780.0f);
  // Positive branch: t = bf16(256 + 3) = 260, kept as is.
  std::vector<bf16_t> pos(8, bf(256.0f)), pos_bias(8, bf(3.0f));
  prelu_bias(pos, kPixel, alpha, pos_bias);
  EXPECT_EQ(f(pos[0]), 260.0f);
  // Zero is not negative: alpha does not apply (and -0 stays a zero).
  std::vector<bf16_t> zero(8, bf(1.0f)), minus_one(8, bf(-1.0f));
  prelu_bias(zero, kPixel, alpha, minus_one);
  EXPECT_EQ(f(zero[0]), 0.0f);
}

TEST(HostGlue, PreluBiasUsesEachChannelsAlphaAndBias) {
  std::vector<bf16_t> buf(8, bf(-1.0f)), alpha(8), bias(8);
  for (int c = 0; c < 8; ++c) alpha[c] = bf(0.25f * c), bias[c] = bf(-1.0f * c);
  prelu_bias(buf, kPixel, alpha, bias);
  for (int c = 0; c < 8; ++c) EXPECT_EQ(f(buf[c]), 0.25f * c * (-1.0f - c)) << c;
}

TEST(HostGlue, BiasRoundsTiesToEven) {
  std::vector<bf16_t> buf(8, bf(256.0f)), b(8);
  for (int c = 0; c < 8; ++c) b[c] = bf(static_cast<float>(c));
  bias(buf, kPixel, b);
  // 256+c in [256, 512) keeps even integers only; odd ones are ties.
  const float expected[8] = {256, 256, 258, 260, 260, 260, 262, 264};
  for (int c = 0; c < 8; ++c) EXPECT_EQ(f(buf[c]), expected[c]) << c;
}

TEST(HostGlue, AddRoundsOnce) {
  std::vector<bf16_t> a = {bf(256.0f), bf(256.0f), bf(1.0f), bf(-1.5f)};
  std::vector<bf16_t> b = {bf(7.0f), bf(5.0f), bf(std::bit_cast<float>(0x3b800000u)), bf(1.5f)};  // 2^-8
  std::vector<bf16_t> out(4);
  add(a, b, out);
  EXPECT_EQ(f(out[0]), 264.0f);  // 263 -> tie between 262 (odd) and 264
  EXPECT_EQ(f(out[1]), 260.0f);  // 261 -> tie between 260 (even) and 262
  EXPECT_EQ(f(out[2]), 1.0f);    // 1 + 2^-8 -> tie, 1.0 is even
  EXPECT_EQ(out[3], 0x0000);     // -1.5 + 1.5 = +0
  add(a, b, a);                  // out may alias a
  EXPECT_EQ(f(a[0]), 264.0f);
}

TEST(HostGlue, SubsampleCopiesEverySthPixel) {
  const TiledShape in_shape{16, 5, 7};  // out is 16 x 2 x 3 for stride 2
  std::vector<bf16_t> in(in_shape.elements()), out(16 * 2 * 3, 0xffff);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<bf16_t>(i);  // raw patterns: a copy must keep them
  subsample(in, out, in_shape, 2);
  for (int ch = 0; ch < 16; ++ch)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 3; ++x) {
        const std::size_t src = ((2 * y * 2 + ch / 8) * 7 + 2 * x) * 8 + ch % 8;
        const std::size_t dst = ((y * 2 + ch / 8) * 3 + x) * 8 + ch % 8;
        EXPECT_EQ(out[dst], in[src]) << ch << "," << y << "," << x;
      }
}

TEST(HostGlue, SliceCopiesChannelGroupsAndZeroPadsWidth) {
  const TiledShape in_shape{32, 3, 5};
  std::vector<bf16_t> in(in_shape.elements());
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<bf16_t>(i + 1);
  const int c0 = 1, icg = 16, wp = 8;
  std::vector<bf16_t> slice(3 * 16 * 8, 0xffff);
  slice_channel_groups(in, in_shape, c0, icg, wp, slice);
  for (int y = 0; y < 3; ++y)
    for (int g = 0; g < 2; ++g)
      for (int x = 0; x < wp; ++x)
        for (int c8 = 0; c8 < 8; ++c8) {
          const bf16_t got = slice[((y * 2 + g) * wp + x) * 8 + c8];
          const int ch = 8 * (c0 + g) + c8;
          const bf16_t want = x < 5 ? in[((y * 4 + ch / 8) * 5 + x) * 8 + ch % 8] : bf16_t{0};
          EXPECT_EQ(got, want) << y << "," << g << "," << x << "," << c8;
        }
}

TEST(HostGlue, SumRecordsStartsTheSumAndAccumulateAddsToIt) {
  std::vector<float> acc = {100.0f, 100.0f, 100.0f};
  const std::vector<bf16_t> d1 = {bf(1.5f), bf(-2.0f), bf(0.25f)}, d2 = {bf(1.0f), bf(3.0f), bf(-0.25f)};
  sum_records(d1, d2, acc);
  EXPECT_EQ(acc, (std::vector<float>{2.5f, 1.0f, 0.0f}));
  accumulate(d2, acc);
  EXPECT_EQ(acc, (std::vector<float>{3.5f, 4.0f, -0.25f}));
}

TEST(HostGlue, AccumulatorKeepsF32PrecisionBetweenRecords) {
  // 256 + 1 + 1 = 258 in f32; rounding after each record would give bf16(257)=256, then 256 again.
  std::vector<float> acc(1);
  sum_records(std::vector<bf16_t>{bf(256.0f)}, std::vector<bf16_t>{bf(1.0f)}, acc);
  accumulate(std::vector<bf16_t>{bf(1.0f)}, acc);
  EXPECT_EQ(acc[0], 258.0f);
}

TEST(HostGlue, FinishConvCropsPaddedWidthAndRoundsToNearestEven) {
  // oc=8, oh=2, ow=2, owp=3: the third column of each row is padding and must be dropped.
  const int oc = 8, oh = 2, ow = 2, owp = 3;
  std::vector<float> acc(static_cast<std::size_t>(oh) * owp * oc);
  for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = 1000.0f + static_cast<float>(i);
  acc[0] = 259.0f;                                  // tie -> 260
  acc[1] = std::bit_cast<float>(0x3f808000u);       // 1 + 2^-8, tie -> 1.0
  acc[2] = std::bit_cast<float>(0x3f808001u);       // above the tie -> 1 + 2^-7
  const std::vector<bf16_t> last_record(acc.size(), bf(0.0f));  // adds nothing: the rounding is tested
  std::vector<bf16_t> out(static_cast<std::size_t>(oh) * ow * oc);
  finish_conv({.first = {}, .sum = acc}, last_record, oc, oh, ow, owp, out);
  EXPECT_EQ(f(out[0]), 260.0f);
  EXPECT_EQ(out[1], 0x3f80);
  EXPECT_EQ(out[2], 0x3f81);
  for (int y = 0; y < oh; ++y)
    for (int x = 0; x < ow; ++x)
      for (int c = 3; c < 8; ++c)
        EXPECT_EQ(out[(y * ow + x) * 8 + c], f32_to_bf16(acc[(y * owp + x) * 8 + c])) << y << "," << x << "," << c;
}

TEST(HostGlue, FinishConvAddsTheLastRecordInF32BeforeRounding) {
  // sum 256 + last 1 = 257 in f32, a bf16 tie -> 256; 256.5 + 1.5 = 258 exactly. Rounding the sum
  // to bf16 before adding, or dropping it, would give other values.
  const std::vector<float> sum = {256.0f, 256.5f, 2.0f, -0.0f, 0.0f, 1.0f, 1.0f, 1.0f};
  const std::vector<bf16_t> last = {bf(1.0f), bf(1.5f), bf(-2.0f), 0x8000, 0x8000, bf(1.0f), bf(2.0f), bf(3.0f)};
  std::vector<bf16_t> out(8);
  finish_conv({.first = {}, .sum = sum}, last, 8, 1, 1, 1, out);
  EXPECT_EQ(f(out[0]), 256.0f);
  EXPECT_EQ(f(out[1]), 258.0f);
  EXPECT_EQ(out[2], 0x0000);  // 2 + -2 = +0
  EXPECT_EQ(out[3], 0x8000);  // -0 + -0 = -0
  EXPECT_EQ(out[4], 0x0000);  // +0 + -0 = +0
  EXPECT_EQ(f(out[7]), 4.0f);
}

// The three ways a conv ends (one record, two, three or more) are the same f32 sum in file order:
// the one-record and two-record shortcuts must equal the accumulator path bit for bit, NaN
// payloads (both give 0x7fc0) and signed zeros included. Negative zeros add nothing in f32.
TEST(HostGlue, FinishConvShortcutsEqualTheAccumulatorPath) {
  const int oc = 16, oh = 3, ow = 5, owp = 8;
  const std::size_t n = static_cast<std::size_t>(oh) * oc * owp;
  std::vector<bf16_t> d1(n), d2(n);
  for (std::size_t i = 0; i < n; ++i) {
    d1[i] = static_cast<bf16_t>(0x3c00u + i * 37u);
    d2[i] = static_cast<bf16_t>(0xbc00u + i * 53u);
  }
  d1[3] = 0x7f81;   // signalling-NaN payload
  d1[9] = 0xffc1;   // negative NaN
  d1[17] = 0x8000;  // negative zero
  d2[17] = 0x8000;
  const std::vector<bf16_t> negative_zeros(n, 0x8000);
  const std::size_t kept = static_cast<std::size_t>(oh) * oc * ow;
  std::vector<float> sum(n);
  std::vector<bf16_t> one_record(kept), via_sum(kept), two_records(kept), two_via_sum(kept);

  finish_conv({}, d1, oc, oh, ow, owp, one_record);
  sum_records(d1, negative_zeros, sum);
  finish_conv({.first = {}, .sum = sum}, negative_zeros, oc, oh, ow, owp, via_sum);
  EXPECT_EQ(one_record, via_sum);
  EXPECT_EQ(one_record[3], 0x7fc0);
  EXPECT_EQ(one_record[17], 0x8000);

  finish_conv({.first = d1, .sum = {}}, d2, oc, oh, ow, owp, two_records);
  sum_records(d1, d2, sum);
  finish_conv({.first = {}, .sum = sum}, negative_zeros, oc, oh, ow, owp, two_via_sum);
  EXPECT_EQ(two_records, two_via_sum);
  EXPECT_EQ(two_records[17], 0x8000);  // -0 + -0
}

TEST(HostGlue, HeadReadsChannelMajorAndAddsBias) {
  // c=8, h=2, w=2 -> k=32, n=3. One-hot input at (ch=1, y=0, x=1): i = (1*2+0)*2+1 = 5.
  const TiledShape shape{8, 2, 2};
  const std::size_t n = 3, k = 32;
  std::vector<bf16_t> in(shape.elements(), 0);
  in[((0 * 1 + 0) * 2 + 1) * 8 + 1] = bf(2.0f);  // tiled position of (ch=1, y=0, x=1)
  std::vector<bf16_t> bT(k * n);
  for (std::size_t i = 0; i < k * n; ++i) bT[i] = bf(static_cast<float>(i % 97) / 8.0f);
  const std::vector<float> b2 = {0.5f, -1.0f, 2.25f};
  std::vector<float> e(n);
  head(in, shape, HeadWeights(bT, k, n), b2, e, 2);
  for (std::size_t j = 0; j < n; ++j) EXPECT_EQ(e[j], b2[j] + 2.0f * f(bT[5 * n + j])) << j;
}

TEST(HostGlue, HeadSumsInOrderInF32) {
  // x = [2^24, 1, 1, ...] with all weights 1: summing in order 0..k-1 in f32 loses every +1
  // (2^24 + 1 rounds back to 2^24), so e = b2 + 2^24 exactly. A pairwise or double sum would not.
  const TiledShape shape{8, 1, 4};  // k = 32, channel-major i = ch*4 + x
  const std::size_t n = 2, k = 32;
  std::vector<bf16_t> in(shape.elements(), bf(1.0f));
  in[0] = bf(16777216.0f);  // (ch=0, x=0) is i = 0
  const std::vector<bf16_t> bT(k * n, bf(1.0f));
  const std::vector<float> b2 = {0.0f, 1.0f};
  std::vector<float> e(n);
  head(in, shape, HeadWeights(bT, k, n), b2, e, 1);
  EXPECT_EQ(e[0], 16777216.0f);
  EXPECT_EQ(e[1], 16777216.0f);  // 1 + 2^24 in f32
}

TEST(HostGlue, TileInputRoundsPadsAndTiles) {
  const TiledShape shape{8, 2, 3};
  std::vector<float> chw(3 * 2 * 3);
  for (std::size_t i = 0; i < chw.size(); ++i) chw[i] = static_cast<float>(i) - 4.0f;
  chw[4] = std::bit_cast<float>(0x3f80c000u);  // (ch=0, y=1, x=1): above the tie -> 0x3f81 (truncation: 0x3f80)
  chw[5] = std::bit_cast<float>(0x3f818000u);  // (ch=0, y=1, x=2): tie, odd -> 0x3f82 (truncation: 0x3f81)
  std::vector<bf16_t> tiled(shape.elements(), 0xffff);
  tile_input(chw, 3, shape, tiled);
  for (int ch = 0; ch < 8; ++ch)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 3; ++x) {
        const bf16_t got = tiled[(y * 3 + x) * 8 + ch];  // C/8 = 1 group
        const bf16_t want = ch < 3 ? f32_to_bf16(chw[(ch * 2 + y) * 3 + x]) : bf16_t{0};
        EXPECT_EQ(got, want) << ch << "," << y << "," << x;
      }
  EXPECT_EQ(tiled[(1 * 3 + 1) * 8 + 0], 0x3f81);
  EXPECT_EQ(tiled[(1 * 3 + 2) * 8 + 0], 0x3f82);
}

}  // namespace
}  // namespace taconite::numerics

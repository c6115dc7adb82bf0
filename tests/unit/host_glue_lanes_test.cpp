// The vector kernels of host_glue (two pixels at a time in unpack order, an odd last pixel alone,
// flat runs of 16 / 8 / 1) against the scalar bf16.hpp definitions, on random bit patterns rich
// in the awkward cases: NaNs with payloads, infinities, signed zeros, subnormals, rounding ties
// and values that overflow to infinity. Every width from 1 to 9 pixels, two channel groups.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "numerics/bf16.hpp"
#include "numerics/host_glue.hpp"

namespace taconite::numerics {
namespace {

float f(bf16_t v) { return bf16_to_f32(v); }

std::vector<bf16_t> awkward_values(std::size_t n, std::uint32_t seed) {
  static const bf16_t kSpecial[] = {0x7f81, 0xffc1, 0x7f80, 0xff80, 0x0000, 0x8000, 0x0001, 0x807f,
                                    0x7f7f, 0xff7f, 0x4380, 0x3f80, 0xbf80, 0x4381, 0x0080, 0x7fc0};
  std::mt19937 rng(seed);
  std::vector<bf16_t> v(n);
  for (bf16_t& x : v) {
    const std::uint32_t r = rng();
    // Half special values, half random patterns near 1 (where sums and products produce ties).
    x = r % 2 == 0 ? kSpecial[(r >> 1) % 16] : static_cast<bf16_t>(0x3b00u + (r >> 8) % 0x0a00u + ((r >> 4) % 2) * 0x8000u);
  }
  return v;
}

// Both sides compare as bit patterns: NaN == NaN when both are 0x7fc0.
void expect_same_bits(const std::vector<bf16_t>& actual, const std::vector<bf16_t>& expected, int width) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    ASSERT_EQ(actual[i], expected[i]) << "width " << width << ", element " << i;
}

constexpr int kChannels = 16;

TEST(HostGlueLanes, PerChannelKernelsEqualTheScalarDefinitions) {
  for (int width = 1; width <= 9; ++width) {
    const TiledShape shape{kChannels, 2, width};
    const std::size_t n = shape.elements();
    const auto x = awkward_values(n, 1u + static_cast<std::uint32_t>(width));
    const auto p1 = awkward_values(kChannels, 100u + static_cast<std::uint32_t>(width));
    const auto p2 = awkward_values(kChannels, 200u + static_cast<std::uint32_t>(width));
    auto channel = [&](std::size_t i) { return (i / (8 * static_cast<std::size_t>(width))) % 2 * 8 + i % 8; };

    std::vector<bf16_t> affine_out(n), affine_want(n);
    affine(x, affine_out, shape, p1, p2);
    for (std::size_t i = 0; i < n; ++i) {
      const float scaled = f(x[i]) * f(p1[channel(i)]);
      affine_want[i] = f32_to_bf16(scaled + f(p2[channel(i)]));
    }
    expect_same_bits(affine_out, affine_want, width);

    std::vector<bf16_t> prelu = x, prelu_want(n);
    prelu_bias(prelu, shape, p1, p2);
    for (std::size_t i = 0; i < n; ++i) {
      const float t = round_to_bf16(f(x[i]) + f(p2[channel(i)]));
      prelu_want[i] = f32_to_bf16(t < 0.0f ? f(p1[channel(i)]) * t : t);
    }
    expect_same_bits(prelu, prelu_want, width);

    std::vector<bf16_t> biased = x, bias_want(n);
    bias(biased, shape, p2);
    for (std::size_t i = 0; i < n; ++i) bias_want[i] = f32_to_bf16(f(x[i]) + f(p2[channel(i)]));
    expect_same_bits(biased, bias_want, width);
  }
}

TEST(HostGlueLanes, FlatKernelsEqualTheScalarDefinitions) {
  for (std::size_t n = 1; n <= 41; ++n) {  // 16-element runs, an 8-element run and single tails
    const auto a = awkward_values(n, 7u + static_cast<std::uint32_t>(n));
    const auto b = awkward_values(n, 900u + static_cast<std::uint32_t>(n));
    std::vector<bf16_t> sum(n), sum_want(n);
    add(a, b, sum);
    for (std::size_t i = 0; i < n; ++i) sum_want[i] = f32_to_bf16(f(a[i]) + f(b[i]));
    expect_same_bits(sum, sum_want, static_cast<int>(n));

    std::vector<float> acc(n);
    sum_records(a, b, acc);
    accumulate(a, acc);
    for (std::size_t i = 0; i < n; ++i) {
      const float want = (f(a[i]) + f(b[i])) + f(a[i]);
      ASSERT_TRUE(std::bit_cast<std::uint32_t>(acc[i]) == std::bit_cast<std::uint32_t>(want) ||
                  (acc[i] != acc[i] && want != want))
          << n << ", element " << i;
    }
  }
}

TEST(HostGlueLanes, FinishConvEqualsTheScalarDefinitionForEveryEnding) {
  for (int ow = 1; ow <= 9; ++ow) {
    const int oc = kChannels, oh = 2, owp = ow + 3;
    const std::size_t padded = static_cast<std::size_t>(oh) * oc * owp, kept = static_cast<std::size_t>(oh) * oc * ow;
    const auto d1 = awkward_values(padded, 300u + static_cast<std::uint32_t>(ow));
    const auto d2 = awkward_values(padded, 400u + static_cast<std::uint32_t>(ow));
    std::vector<float> sum(padded);
    for (std::size_t i = 0; i < padded; ++i) sum[i] = f(d1[i]) * 3.0f;  // any f32, not only bf16 values
    auto kept_index = [&](std::size_t k) { return k / (8 * static_cast<std::size_t>(ow)) * 8 * owp + k % (8 * static_cast<std::size_t>(ow)); };

    std::vector<bf16_t> one(kept), two(kept), many(kept), want(kept);
    finish_conv({}, d1, oc, oh, ow, owp, one);
    for (std::size_t k = 0; k < kept; ++k) want[k] = f32_to_bf16(f(d1[kept_index(k)]));
    expect_same_bits(one, want, ow);

    finish_conv({.first = d1, .sum = {}}, d2, oc, oh, ow, owp, two);
    for (std::size_t k = 0; k < kept; ++k) want[k] = f32_to_bf16(f(d1[kept_index(k)]) + f(d2[kept_index(k)]));
    expect_same_bits(two, want, ow);

    finish_conv({.first = {}, .sum = sum}, d2, oc, oh, ow, owp, many);
    for (std::size_t k = 0; k < kept; ++k) want[k] = f32_to_bf16(sum[kept_index(k)] + f(d2[kept_index(k)]));
    expect_same_bits(many, want, ow);
  }
}

TEST(HostGlueLanes, HeadSumsEveryColumnInOrderAcrossBlocks) {
  // n = 70: one whole block of 64 columns (all four 16-column runs) and a ragged block of 6.
  const TiledShape shape{8, 3, 5};
  const std::size_t k = shape.elements(), n = 70;
  std::vector<bf16_t> in(k);
  std::mt19937 rng(5);
  for (bf16_t& v : in) v = f32_to_bf16(static_cast<float>(rng() % 2001) / 100.0f - 10.0f);
  std::vector<bf16_t> bT(k * n);
  for (bf16_t& v : bT) v = f32_to_bf16(static_cast<float>(rng() % 2001) / 250.0f - 4.0f);
  std::vector<float> b2(n), e(n);
  for (std::size_t j = 0; j < n; ++j) b2[j] = static_cast<float>(j) / 8.0f;
  head(in, shape, HeadWeights(bT, k, n), b2, e, 2);
  for (std::size_t j = 0; j < n; ++j) {
    float sum = 0.0f;
    for (std::size_t i = 0; i < k; ++i) {
      const std::size_t ch = i / 15, y = i / 5 % 3, x = i % 5;  // channel-major i = (ch*h + y)*w + x
      sum += f(in[(y * 5 + x) * 8 + ch]) * f(bT[i * n + j]);
    }
    EXPECT_EQ(std::bit_cast<std::uint32_t>(e[j]), std::bit_cast<std::uint32_t>(b2[j] + sum)) << j;
  }
}

}  // namespace
}  // namespace taconite::numerics

// The affine fold's arithmetic against a direct convolution of the affine's output, padding
// included: the folded weights, bias and border correction give the same conv, in every pixel.
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "cpu/affine_fold.hpp"

namespace taconite::cpu_test {
namespace {

using Tensor = std::vector<double>;  // C x H x W

// out[o][y][x] = bias[o] + sum W[o][i][ky][kx] * pad0(in)[i][y*s + ky - p][x*s + kx - p]
Tensor direct_conv(const cpu::ConvGeometry& g, const std::vector<float>& w, const Tensor& in, const std::vector<double>& bias) {
  const int k = g.kernel, p = g.pad();
  Tensor out(static_cast<std::size_t>(g.oc * g.out_h() * g.out_w()));
  for (int o = 0; o < g.oc; ++o)
    for (int y = 0; y < g.out_h(); ++y)
      for (int x = 0; x < g.out_w(); ++x) {
        double sum = bias[static_cast<std::size_t>(o)];
        for (int i = 0; i < g.ic; ++i)
          for (int ky = 0; ky < k; ++ky)
            for (int kx = 0; kx < k; ++kx) {
              const int iy = y * g.stride + ky - p, ix = x * g.stride + kx - p;
              if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
              sum += w[static_cast<std::size_t>(((o * g.ic + i) * k + ky) * k + kx)] *
                     in[static_cast<std::size_t>((i * g.in_h + iy) * g.in_w + ix)];
            }
        out[static_cast<std::size_t>((o * g.out_h() + y) * g.out_w() + x)] = sum;
      }
  return out;
}

struct Case {
  int kernel, stride, in_h, in_w;
};

class AffineFold : public testing::TestWithParam<Case> {};

TEST_P(AffineFold, FoldedConvEqualsTheConvOfTheAffinesOutput) {
  const Case c = GetParam();
  const cpu::ConvGeometry g{5, 3, c.kernel, c.stride, c.in_h, c.in_w};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> w(static_cast<std::size_t>(g.oc * g.ic * g.kernel * g.kernel)), scale(3), shift(3), bias(5);
  for (float& v : w) v = u(rng);
  for (float& v : scale) v = 0.5f + u(rng) * 0.4f;
  for (float& v : shift) v = 2.0f * u(rng);  // large shifts: the border terms are not small
  for (float& v : bias) v = u(rng);
  Tensor x(static_cast<std::size_t>(g.ic * g.in_h * g.in_w)), affine_out(x.size());
  for (std::size_t n = 0; n < x.size(); ++n) {
    x[n] = u(rng);
    const std::size_t i = n / static_cast<std::size_t>(g.in_h * g.in_w);
    affine_out[n] = x[n] * scale[i] + shift[i];
  }
  const Tensor expected = direct_conv(g, w, affine_out, std::vector<double>(bias.begin(), bias.end()));

  std::vector<float> folded_w = w;
  const cpu::AffineFold fold = cpu::fold_input_affine(g, folded_w, scale, shift, bias);
  Tensor got = direct_conv(g, folded_w, x, std::vector<double>(fold.bias.begin(), fold.bias.end()));
  const std::size_t plane = static_cast<std::size_t>(g.out_h() * g.out_w());
  for (const cpu::BorderCorrection::Pixel& p : fold.border.pixels)
    for (int o = 0; o < g.oc; ++o)
      got[static_cast<std::size_t>(o) * plane + static_cast<std::size_t>(p.y * g.out_w() + p.x)] +=
          fold.border.corrections[static_cast<std::size_t>(p.table * g.oc + o)];

  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t n = 0; n < got.size(); ++n) EXPECT_NEAR(got[n], expected[n], 1e-4) << "element " << n;

  // Only pixels with a tap outside the input are corrected.
  int border = 0;
  for (int y = 0; y < g.out_h(); ++y)
    for (int x = 0; x < g.out_w(); ++x) {
      const bool inside = y * g.stride - g.pad() >= 0 && y * g.stride - g.pad() + g.kernel <= g.in_h &&
                          x * g.stride - g.pad() >= 0 && x * g.stride - g.pad() + g.kernel <= g.in_w;
      border += !inside;
    }
  EXPECT_EQ(static_cast<int>(fold.border.pixels.size()), border);
}

INSTANTIATE_TEST_SUITE_P(Geometries, AffineFold,
                         testing::Values(Case{3, 1, 6, 5}, Case{3, 2, 6, 6}, Case{3, 2, 7, 5}, Case{3, 1, 1, 4},
                                         Case{1, 1, 4, 4}),
                         [](const auto& info) {
                           const Case& c = info.param;
                           return "k" + std::to_string(c.kernel) + "_s" + std::to_string(c.stride) + "_" +
                                  std::to_string(c.in_h) + "x" + std::to_string(c.in_w);
                         });

TEST(AffineFoldBorder, A3x3StrideOneConvCorrectsItsOuterRing) {
  const cpu::ConvGeometry g{2, 2, 3, 1, 112, 112};
  std::vector<float> w(2 * 2 * 9, 1.0f), scale(2, 1.0f), shift(2, 1.0f);
  const cpu::AffineFold fold = cpu::fold_input_affine(g, w, scale, shift, {});
  EXPECT_EQ(fold.border.pixels.size(), 4u * 111u);
  EXPECT_EQ(fold.border.corrections.size(), 8u * 2u) << "4 edges and 4 corners";
  EXPECT_FLOAT_EQ(fold.bias[0], 18.0f) << "2 channels x 9 taps of shift 1";
}

}  // namespace
}  // namespace taconite::cpu_test

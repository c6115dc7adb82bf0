// The f32 ground-truth layers against naive loops written here, and calibration doing its job.
#include <gtest/gtest.h>

#include <cmath>

#include "face_image.hpp"
#include "fp32_forward.hpp"
#include "fp32_ops.hpp"
#include "rng.hpp"

namespace taconite::mkbundle {
namespace {

void fill(std::vector<float>& v, Rng& rng) {
  for (float& x : v) x = static_cast<float>(rng.normal());
}

TEST(Fp32Ops, GemmMatchesNaiveProduct) {
  Rng rng(3);
  for (auto [m, n, k] : {std::tuple{4, 16, 1}, {8, 32, 300}, {68, 144, 257}, {132, 272, 40}}) {
    std::vector<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n),
        c(static_cast<std::size_t>(m) * n, 123.0f);
    fill(a, rng);
    fill(b, rng);
    gemm(m, n, k, a.data(), b.data(), c.data());
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double ref = 0.0;
        for (int t = 0; t < k; ++t) ref += static_cast<double>(a[i * k + t]) * b[t * n + j];
        ASSERT_NEAR(c[i * n + j], ref, 1e-4 * (1.0 + std::sqrt(static_cast<double>(k)))) << m << "x" << n << "x" << k;
      }
  }
  std::vector<float> c(16);
  EXPECT_THROW(gemm(3, 16, 2, c.data(), c.data(), c.data()), std::invalid_argument);
}

TEST(Fp32Ops, Conv2dMatchesDirectLoopsWithPaddingAndStride) {
  Rng rng(4);
  for (auto [k, stride, h, w] : {std::tuple{3, 1, 9, 7}, {3, 2, 10, 12}, {1, 2, 9, 9}, {1, 1, 5, 6}}) {
    Conv2d conv{5, 8, k, stride, std::vector<float>(static_cast<std::size_t>(8) * 5 * k * k)};
    fill(conv.weight, rng);
    Tensor4 x(2, 5, h, w);
    fill(x.data, rng);
    const Tensor4 y = conv2d(x, conv);
    const int pad = k / 2, oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
    ASSERT_EQ(y.h, oh);
    ASSERT_EQ(y.w, ow);
    for (int n = 0; n < 2; ++n)
      for (int o = 0; o < 8; ++o)
        for (int oy = 0; oy < oh; ++oy)
          for (int ox = 0; ox < ow; ++ox) {
            double ref = 0.0;
            for (int i = 0; i < 5; ++i)
              for (int ky = 0; ky < k; ++ky)
                for (int kx = 0; kx < k; ++kx) {
                  const int yy = oy * stride + ky - pad, xx = ox * stride + kx - pad;
                  if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                  ref += static_cast<double>(x.image(n)[(i * h + yy) * w + xx]) * conv.weight[((o * 5 + i) * k + ky) * k + kx];
                }
            ASSERT_NEAR(y.image(n)[(o * oh + oy) * ow + ox], ref, 1e-4);
          }
  }
}

TEST(Fp32Ops, CalibratedBatchNormNormalisesItsBatch) {
  Rng rng(5);
  Tensor4 x(3, 4, 6, 5);
  for (std::size_t i = 0; i < x.data.size(); ++i) x.data[i] = static_cast<float>(7.0 + 3.0 * rng.normal());
  BatchNorm bn{4, true, {1, 1, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 1, 1, 1}, 1e-5f};
  calibrate_batchnorm(x, bn);
  for (int c = 0; c < 4; ++c) {
    EXPECT_NEAR(bn.mean[static_cast<std::size_t>(c)], 7.0, 1.5);
    EXPECT_NEAR(bn.var[static_cast<std::size_t>(c)], 9.0, 4.0);
  }
  batchnorm(x, bn);
  for (int c = 0; c < 4; ++c) {
    double sum = 0, sq = 0;
    for (int n = 0; n < 3; ++n)
      for (std::size_t j = 0; j < x.plane(); ++j) {
        const double v = x.image(n)[static_cast<std::size_t>(c) * x.plane() + j];
        sum += v;
        sq += v * v;
      }
    const double count = 3.0 * static_cast<double>(x.plane());
    EXPECT_NEAR(sum / count, 0.0, 1e-4);
    EXPECT_NEAR(sq / count, 1.0, 1e-3);
  }
}

TEST(Fp32Ops, MaxPoolOfKernelOneKeepsEveryOtherPixel) {
  Tensor4 x(1, 1, 4, 4);
  for (std::size_t i = 0; i < 16; ++i) x.data[i] = static_cast<float>(i);
  const Tensor4 y = maxpool1(x, 2);
  EXPECT_EQ(y.data, (std::vector<float>{0, 2, 8, 10}));
}

TEST(Fp32Forward, CalibrationKeepsDeepActivationsBounded) {
  IrNetwork net = make_network(ModelKind::IrTiny, {9, 0.2f});
  const Tensor4 faces = random_faces(2, 112, 112, 9);
  ActivationTrace uncalibrated;
  embed_fp32(net, faces, &uncalibrated);
  ActivationTrace calibrated;
  calibrate(net, faces, &calibrated);
  // Batch statistics make every BN output ~unit variance; the residual sums stay O(1).
  for (double r : calibrated.unit_rms) {
    EXPECT_GT(r, 0.3);
    EXPECT_LT(r, 5.0);
  }
  EXPECT_NEAR(calibrated.head_input_rms, 1.0, 0.5);
  // Running statistics left at their defaults do not normalise anything.
  EXPECT_GT(std::abs(uncalibrated.head_input_rms - calibrated.head_input_rms), 0.1);
}

TEST(Fp32Forward, RandomFacesAreSeededAndInRange) {
  const Tensor4 a = random_faces(2, 112, 112, 1), b = random_faces(2, 112, 112, 1), c = random_faces(2, 112, 112, 2);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  for (float v : a.data) {
    ASSERT_GE(v, -1.0f);
    ASSERT_LE(v, 1.0f);
  }
}

}  // namespace
}  // namespace taconite::mkbundle

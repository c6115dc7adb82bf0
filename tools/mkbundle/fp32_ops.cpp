#include "fp32_ops.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace taconite::mkbundle {

namespace {

using v8f = float __attribute__((vector_size(32)));
constexpr int kRows = 4, kCols = 16;               // register block of the micro kernel
constexpr int kBlockM = 64, kBlockN = 128, kBlockK = 256;  // cache blocks

v8f load8(const float* p) {
  v8f v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
void store8(float* p, v8f v) { std::memcpy(p, &v, sizeof(v)); }

// C[0..4)[0..16) (+)= A[0..4)[k0..k1) * B[k0..k1)[0..16).
// Dispatch on the AVX2+FMA feature level: "arch=haswell" would test the CPU model and pick the
// SSE2 clone on every AMD or newer Intel CPU.
__attribute__((target_clones("arch=x86-64-v3", "default"))) void micro_kernel(int k0, int k1, const float* a, int lda,
                                                                           const float* b, int ldb, float* c, int ldc) {
  v8f acc[kRows][2];
  for (int r = 0; r < kRows; ++r) {
    if (k0 == 0) {
      acc[r][0] = v8f{};
      acc[r][1] = v8f{};
    } else {
      acc[r][0] = load8(c + static_cast<std::size_t>(r) * ldc);
      acc[r][1] = load8(c + static_cast<std::size_t>(r) * ldc + 8);
    }
  }
  for (int k = k0; k < k1; ++k) {
    const float* brow = b + static_cast<std::size_t>(k) * ldb;
    const v8f b0 = load8(brow), b1 = load8(brow + 8);
    for (int r = 0; r < kRows; ++r) {
      const float av = a[static_cast<std::size_t>(r) * lda + k];
      acc[r][0] += av * b0;
      acc[r][1] += av * b1;
    }
  }
  for (int r = 0; r < kRows; ++r) {
    store8(c + static_cast<std::size_t>(r) * ldc, acc[r][0]);
    store8(c + static_cast<std::size_t>(r) * ldc + 8, acc[r][1]);
  }
}

int output_size(int in, int kernel, int stride) { return (in + 2 * (kernel / 2) - kernel) / stride + 1; }
int round_up(int v, int m) { return (v + m - 1) / m * m; }

// col[(i*k + ky)*k + kx][oy*ow + ox] = x[i][oy*s+ky-p][ox*s+kx-p] (zero outside), row length ld.
void im2col(const float* x, int channels, int h, int w, int kernel, int stride, int oh, int ow, int ld, float* col) {
  const int pad = kernel / 2;
#pragma omp parallel for schedule(static)
  for (int i = 0; i < channels; ++i)
    for (int ky = 0; ky < kernel; ++ky)
      for (int kx = 0; kx < kernel; ++kx) {
        float* row = col + static_cast<std::size_t>((i * kernel + ky) * kernel + kx) * ld;
        std::fill(row, row + ld, 0.0f);
        for (int oy = 0; oy < oh; ++oy) {
          const int y = oy * stride + ky - pad;
          if (y < 0 || y >= h) continue;
          const float* src = x + (static_cast<std::size_t>(i) * h + y) * w;
          for (int ox = 0; ox < ow; ++ox) {
            const int xx = ox * stride + kx - pad;
            if (xx >= 0 && xx < w) row[oy * ow + ox] = src[xx];
          }
        }
      }
}

}  // namespace

void gemm(int m, int n, int k, const float* a, const float* b, float* c) {
  if (m % kRows != 0 || n % kCols != 0)
    throw std::invalid_argument("gemm: m must be a multiple of 4 and n of 16 (m=" + std::to_string(m) +
                                ", n=" + std::to_string(n) + ")");
  if (k == 0) {
    std::fill(c, c + static_cast<std::size_t>(m) * n, 0.0f);
    return;
  }
  const int tiles_m = (m + kBlockM - 1) / kBlockM, tiles_n = (n + kBlockN - 1) / kBlockN;
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int tm = 0; tm < tiles_m; ++tm)
    for (int tn = 0; tn < tiles_n; ++tn) {
      const int m0 = tm * kBlockM, m1 = std::min(m, m0 + kBlockM);
      const int n0 = tn * kBlockN, n1 = std::min(n, n0 + kBlockN);
      for (int k0 = 0; k0 < k; k0 += kBlockK) {
        const int k1 = std::min(k, k0 + kBlockK);
        for (int i = m0; i < m1; i += kRows)
          for (int j = n0; j < n1; j += kCols)
            micro_kernel(k0, k1, a + static_cast<std::size_t>(i) * k, k, b + j, n,
                         c + static_cast<std::size_t>(i) * n + j, n);
      }
    }
}

Tensor4 conv2d(const Tensor4& x, const Conv2d& conv) {
  if (x.c != conv.in_channels)
    throw std::invalid_argument("conv2d: input has " + std::to_string(x.c) + " channels, conv expects " +
                                std::to_string(conv.in_channels));
  const int oh = output_size(x.h, conv.kernel, conv.stride), ow = output_size(x.w, conv.kernel, conv.stride);
  const int cols = oh * ow, ld = round_up(cols, kCols);
  const int k = conv.in_channels * conv.kernel * conv.kernel;
  Tensor4 y(x.n, conv.out_channels, oh, ow);
  std::vector<float> col(static_cast<std::size_t>(k) * ld), out(static_cast<std::size_t>(conv.out_channels) * ld);
  for (int i = 0; i < x.n; ++i) {
    im2col(x.image(i), x.c, x.h, x.w, conv.kernel, conv.stride, oh, ow, ld, col.data());
    gemm(conv.out_channels, ld, k, conv.weight.data(), col.data(), out.data());
    float* dst = y.image(i);
    for (int o = 0; o < conv.out_channels; ++o)
      std::memcpy(dst + static_cast<std::size_t>(o) * cols, out.data() + static_cast<std::size_t>(o) * ld,
                  sizeof(float) * static_cast<std::size_t>(cols));
  }
  return y;
}

void calibrate_batchnorm(const Tensor4& x, BatchNorm& bn) {
  const std::size_t plane = x.plane();
  const double count = static_cast<double>(x.n) * static_cast<double>(plane);
#pragma omp parallel for schedule(static)
  for (int c = 0; c < x.c; ++c) {
    double sum = 0.0, sum_sq = 0.0;
    for (int i = 0; i < x.n; ++i) {
      const float* p = x.image(i) + static_cast<std::size_t>(c) * plane;
      for (std::size_t j = 0; j < plane; ++j) {
        sum += p[j];
        sum_sq += static_cast<double>(p[j]) * p[j];
      }
    }
    const double mean = sum / count;
    bn.mean[static_cast<std::size_t>(c)] = static_cast<float>(mean);
    bn.var[static_cast<std::size_t>(c)] = static_cast<float>(std::max(0.0, sum_sq / count - mean * mean));
  }
}

void batchnorm(Tensor4& x, const BatchNorm& bn) {
  const std::size_t plane = x.plane();
#pragma omp parallel for collapse(2) schedule(static)
  for (int i = 0; i < x.n; ++i)
    for (int c = 0; c < x.c; ++c) {
      const std::size_t cc = static_cast<std::size_t>(c);
      const float inv_std = 1.0f / std::sqrt(bn.var[cc] + bn.eps);
      const float gamma = bn.affine ? bn.gamma[cc] : 1.0f, beta = bn.affine ? bn.beta[cc] : 0.0f;
      float* p = x.image(i) + cc * plane;
      for (std::size_t j = 0; j < plane; ++j) p[j] = (p[j] - bn.mean[cc]) * inv_std * gamma + beta;
    }
}

void prelu(Tensor4& x, const PRelu& p) {
  const std::size_t plane = x.plane();
#pragma omp parallel for collapse(2) schedule(static)
  for (int i = 0; i < x.n; ++i)
    for (int c = 0; c < x.c; ++c) {
      const float alpha = p.alpha[static_cast<std::size_t>(c)];
      float* v = x.image(i) + static_cast<std::size_t>(c) * plane;
      for (std::size_t j = 0; j < plane; ++j) v[j] = v[j] < 0.0f ? alpha * v[j] : v[j];
    }
}

Tensor4 maxpool1(const Tensor4& x, int stride) {
  Tensor4 y(x.n, x.c, output_size(x.h, 1, stride), output_size(x.w, 1, stride));
  for (int i = 0; i < x.n; ++i)
    for (int c = 0; c < x.c; ++c)
      for (int oy = 0; oy < y.h; ++oy)
        for (int ox = 0; ox < y.w; ++ox)
          y.image(i)[(static_cast<std::size_t>(c) * y.h + oy) * y.w + ox] =
              x.image(i)[(static_cast<std::size_t>(c) * x.h + oy * stride) * x.w + ox * stride];
  return y;
}

void add_in_place(Tensor4& x, const Tensor4& y) {
  if (x.data.size() != y.data.size()) throw std::invalid_argument("add: shapes differ");
  for (std::size_t i = 0; i < x.data.size(); ++i) x.data[i] += y.data[i];
}

std::vector<float> linear(const Tensor4& x, const Linear& fc) {
  const std::size_t k = static_cast<std::size_t>(x.c) * x.plane();
  if (k != static_cast<std::size_t>(fc.in_features))
    throw std::invalid_argument("linear: input has " + std::to_string(k) + " features, expected " +
                                std::to_string(fc.in_features));
  std::vector<float> y(static_cast<std::size_t>(x.n) * fc.out_features);
#pragma omp parallel for collapse(2) schedule(static)
  for (int i = 0; i < x.n; ++i)
    for (int j = 0; j < fc.out_features; ++j) {
      const float* in = x.image(i);
      const float* wrow = fc.weight.data() + static_cast<std::size_t>(j) * k;
      double sum = fc.bias[static_cast<std::size_t>(j)];
      for (std::size_t t = 0; t < k; ++t) sum += static_cast<double>(in[t]) * wrow[t];
      y[static_cast<std::size_t>(i) * fc.out_features + j] = static_cast<float>(sum);
    }
  return y;
}

}  // namespace taconite::mkbundle

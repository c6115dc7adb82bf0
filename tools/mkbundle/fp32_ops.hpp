// Plain f32 layers on channel-major batches [n][c][h][w], the ground truth the replay is
// checked against. Independent of the runtime's replay code: convolution is im2col + a blocked
// GEMM, BatchNorm uses its real running statistics (not folded into anything).
#pragma once

#include <cstddef>
#include <vector>

#include "ir_network.hpp"

namespace taconite::mkbundle {

struct Tensor4 {
  int n = 0, c = 0, h = 0, w = 0;
  std::vector<float> data;
  Tensor4() = default;
  Tensor4(int n_, int c_, int h_, int w_)
      : n(n_), c(c_), h(h_), w(w_), data(static_cast<std::size_t>(n_) * c_ * h_ * w_) {}
  std::size_t plane() const { return static_cast<std::size_t>(h) * w; }
  float* image(int i) { return data.data() + static_cast<std::size_t>(i) * c * plane(); }
  const float* image(int i) const { return data.data() + static_cast<std::size_t>(i) * c * plane(); }
};

// C[m][n] = A[m][k] * B[k][n] (row-major, C overwritten). n must be a multiple of 16.
void gemm(int m, int n, int k, const float* a, const float* b, float* c);

// Zero-padded (kernel/2) convolution with the conv's stride, no bias.
Tensor4 conv2d(const Tensor4& x, const Conv2d& conv);

// Sets the BN's running mean/var from x's per-channel batch statistics (population variance).
void calibrate_batchnorm(const Tensor4& x, BatchNorm& bn);
// y = (x - mean)/sqrt(var + eps) * gamma + beta, in place.
void batchnorm(Tensor4& x, const BatchNorm& bn);
void prelu(Tensor4& x, const PRelu& p);
// MaxPool2d(kernel 1, stride s): keeps every s-th row and column.
Tensor4 maxpool1(const Tensor4& x, int stride);
void add_in_place(Tensor4& x, const Tensor4& y);
// [n][features] = x (flattened channel-major) * W^T + b.
std::vector<float> linear(const Tensor4& x, const Linear& fc);

}  // namespace taconite::mkbundle

#include "naive_reference.hpp"

#include <cmath>

namespace taconite::testing {

namespace {

using Tensor = std::vector<float>;  // channel-major [c][h][w]
constexpr int kMid = FixtureModel::kMidC, kH = FixtureModel::kH, kW = FixtureModel::kW;

Tensor rounded(Tensor t) {
  for (float& v : t) v = naive_round_bf16(v);
  return t;
}

// One conv as the manifest records it: dispatches over input-channel groups, each dispatch's
// output rounded to bf16, summed in f32 in record order, the sum rounded once more.
Tensor conv_in_groups(const Tensor& in, int ic, const Tensor& oihw, int oc, int kernel, const std::vector<int>& group_sizes) {
  const int kk = kernel * kernel;
  Tensor sum(static_cast<std::size_t>(oc) * kH * kW, 0.0f);
  int first = 0;
  for (int size : group_sizes) {
    Tensor part_in(in.begin() + static_cast<long>(first) * kH * kW, in.begin() + static_cast<long>(first + size) * kH * kW);
    Tensor part_w;
    for (int o = 0; o < oc; ++o)
      for (int i = first; i < first + size; ++i)
        for (int t = 0; t < kk; ++t) part_w.push_back(oihw[(static_cast<std::size_t>(o) * ic + i) * kk + t]);
    const Tensor dispatch = rounded(naive_conv(part_in, size, kH, kW, part_w, oc, kernel));
    for (std::size_t j = 0; j < sum.size(); ++j) sum[j] += dispatch[j];
    first += size;
  }
  return rounded(sum);
}

float channel_value(const std::vector<float>& per_channel, std::size_t index, int h, int w) {
  return per_channel[index / (static_cast<std::size_t>(h) * w)];
}

}  // namespace

float naive_round_bf16(float value) {
  if (value == 0.0f || !std::isfinite(value)) return value;
  int exponent = 0;
  const double mantissa = std::frexp(static_cast<double>(value), &exponent);  // |mantissa| in [0.5, 1)
  // nearbyint uses the current rounding mode, which is round-to-nearest-even unless changed.
  const double kept = std::nearbyint(mantissa * 256.0);  // 8 significant bits, ties to even
  return static_cast<float>(std::ldexp(kept, exponent - 8));
}

std::vector<float> naive_conv(const std::vector<float>& in, int ic, int h, int w, const std::vector<float>& weights,
                              int oc, int kernel) {
  const int pad = kernel / 2;
  std::vector<float> out(static_cast<std::size_t>(oc) * h * w);
  for (int o = 0; o < oc; ++o)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        float acc = 0.0f;
        for (int i = 0; i < ic; ++i)
          for (int ky = 0; ky < kernel; ++ky)
            for (int kx = 0; kx < kernel; ++kx) {
              const int sy = y + ky - pad, sx = x + kx - pad;
              if (sy < 0 || sy >= h || sx < 0 || sx >= w) continue;
              acc += in[(static_cast<std::size_t>(i) * h + sy) * w + sx] *
                     weights[((static_cast<std::size_t>(o) * ic + i) * kernel + ky) * kernel + kx];
            }
        out[(static_cast<std::size_t>(o) * h + y) * w + x] = acc;
      }
  return out;
}

std::vector<float> naive_fixture_embedding(const FixtureModel& m) {
  const std::size_t plane = static_cast<std::size_t>(kH) * kW;
  // stem conv (one dispatch over the 8 padded input channels) + prelu_bias
  Tensor x1 = conv_in_groups(rounded(m.input_chw), FixtureModel::kInC, m.stem_w, kMid, 3, {8});
  for (std::size_t j = 0; j < x1.size(); ++j) {
    const float t = naive_round_bf16(x1[j] + channel_value(m.p1_bias, j, kH, kW));
    x1[j] = naive_round_bf16(t < 0.0f ? channel_value(m.p1_alpha, j, kH, kW) * t : t);
  }
  // affine (BN before the residual conv)
  Tensor x2(x1.size());
  for (std::size_t j = 0; j < x1.size(); ++j) {
    const float scaled = x1[j] * channel_value(m.a1_scale, j, kH, kW);
    x2[j] = naive_round_bf16(scaled + channel_value(m.a1_shift, j, kH, kW));
  }
  // residual: conv3x3 in two input groups of 8, + bias
  Tensor x3 = conv_in_groups(x2, kMid, m.c2_w, kMid, 3, {8, 8});
  for (std::size_t j = 0; j < x3.size(); ++j) x3[j] = naive_round_bf16(x3[j] + channel_value(m.c2_bias, j, kH, kW));
  // shortcut: conv1x1 on x1, + bias
  Tensor x4 = conv_in_groups(x1, kMid, m.sc_w, kMid, 1, {16});
  for (std::size_t j = 0; j < x4.size(); ++j) x4[j] = naive_round_bf16(x4[j] + channel_value(m.sc_bias, j, kH, kW));
  // add, subsample by 2
  Tensor x5(x3.size());
  for (std::size_t j = 0; j < x5.size(); ++j) x5[j] = naive_round_bf16(x3[j] + x4[j]);
  const int h6 = kH / 2, w6 = kW / 2;
  Tensor x6;
  for (int c = 0; c < kMid; ++c)
    for (int y = 0; y < h6; ++y)
      for (int x = 0; x < w6; ++x) x6.push_back(x5[c * plane + static_cast<std::size_t>(2 * y) * kW + 2 * x]);
  // head: channel-major flatten, e[j] = b2[j] + sum_i x[i] * bT[i][j]
  const std::size_t n = FixtureModel::kN;
  std::vector<float> e(n);
  for (std::size_t j = 0; j < n; ++j) {
    float acc = 0.0f;
    for (std::size_t i = 0; i < x6.size(); ++i) acc += x6[i] * m.head_bT[i * n + j];
    e[j] = m.head_b2[j] + acc;
  }
  return e;
}

}  // namespace taconite::testing

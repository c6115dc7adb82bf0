#include "cpu/affine_fold.hpp"

#include <map>
#include <utility>

namespace taconite::cpu {

namespace {

// Bit k set when tap k of output position `out` (along one axis) reads padding.
unsigned taps_outside(int out, int stride, int pad, int kernel, int size) {
  unsigned mask = 0;
  for (int k = 0; k < kernel; ++k) {
    const int in = out * stride + k - pad;
    if (in < 0 || in >= size) mask |= 1u << k;
  }
  return mask;
}

}  // namespace

BorderCorrection border_pixels(const ConvGeometry& g) {
  BorderCorrection border;
  border.oc = g.oc;
  std::map<std::pair<unsigned, unsigned>, int> tables;  // (rows, columns) outside -> table
  for (int y = 0; y < g.out_h(); ++y) {
    const unsigned rows = taps_outside(y, g.stride, g.pad(), g.kernel, g.in_h);
    for (int x = 0; x < g.out_w(); ++x) {
      const unsigned cols = taps_outside(x, g.stride, g.pad(), g.kernel, g.in_w);
      if (rows == 0 && cols == 0) continue;
      auto [it, added] = tables.try_emplace({rows, cols}, static_cast<int>(tables.size()));
      if (added) border.outside.push_back({rows, cols});
      border.pixels.push_back({y, x, it->second});
    }
  }
  border.corrections.assign(border.outside.size() * static_cast<std::size_t>(g.oc), 0.0f);
  return border;
}

AffineFold fold_input_affine(const ConvGeometry& g, std::span<float> oihw, std::span<const float> scale,
                             std::span<const float> shift, std::span<const float> bias) {
  const std::size_t oc = static_cast<std::size_t>(g.oc), ic = static_cast<std::size_t>(g.ic);
  const std::size_t k = static_cast<std::size_t>(g.kernel), taps = k * k;
  // V[o][tap], in double: a sum over up to 512 input channels.
  std::vector<double> v(oc * taps, 0.0);
  for (std::size_t o = 0; o < oc; ++o)
    for (std::size_t i = 0; i < ic; ++i) {
      float* w = &oihw[(o * ic + i) * taps];
      for (std::size_t t = 0; t < taps; ++t) {
        v[o * taps + t] += static_cast<double>(w[t]) * shift[i];
        w[t] *= scale[i];
      }
    }

  AffineFold fold;
  fold.bias.resize(oc);
  for (std::size_t o = 0; o < oc; ++o) {
    double sum = bias.empty() ? 0.0 : bias[o];
    for (std::size_t t = 0; t < taps; ++t) sum += v[o * taps + t];
    fold.bias[o] = static_cast<float>(sum);
  }

  fold.border = border_pixels(g);
  for (std::size_t table = 0; table < fold.border.outside.size(); ++table) {
    const BorderCorrection::Taps taps_out = fold.border.outside[table];
    for (std::size_t o = 0; o < oc; ++o) {
      double outside = 0.0;
      for (std::size_t ky = 0; ky < k; ++ky)
        for (std::size_t kx = 0; kx < k; ++kx)
          if ((taps_out.rows >> ky & 1u) != 0 || (taps_out.cols >> kx & 1u) != 0) outside += v[o * taps + ky * k + kx];
      fold.border.corrections[table * oc + o] = static_cast<float>(-outside);
    }
  }
  return fold;
}

}  // namespace taconite::cpu

#include "numerics/host_glue.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "numerics/tiled_layout.hpp"

namespace taconite::numerics {

namespace {

// Below this many elements a parallel region costs more than it saves.
constexpr std::size_t kParallelThreshold = 1 << 15;

int threads_for(std::size_t elements, int threads) { return elements < kParallelThreshold ? 1 : std::max(threads, 1); }

// Calls fn(row_begin, params_index_base) over the tiled buffer in runs of 8 channels: every
// run of 8 consecutive elements belongs to one channel group `cg` (channels 8*cg .. 8*cg+7).
template <typename Fn>
void for_each_channel_run(TiledShape shape, int threads, Fn&& fn) {
  const int groups = shape.c / 8;
  const std::size_t rows = static_cast<std::size_t>(shape.h) * groups;
#pragma omp parallel for num_threads(threads_for(shape.elements(), threads)) schedule(static)
  for (std::size_t row = 0; row < rows; ++row) {
    const std::size_t cg = row % static_cast<std::size_t>(groups);
    for (int x = 0; x < shape.w; ++x) fn((row * shape.w + x) * 8, cg * 8);
  }
}

}  // namespace

void affine(std::span<const bf16_t> in, std::span<bf16_t> out, TiledShape shape, std::span<const bf16_t> scale,
            std::span<const bf16_t> shift, int threads) {
  for_each_channel_run(shape, threads, [&](std::size_t at, std::size_t ch) {
    for (std::size_t k = 0; k < 8; ++k) {
      const float scaled = bf16_to_f32(in[at + k]) * bf16_to_f32(scale[ch + k]);
      out[at + k] = f32_to_bf16(scaled + bf16_to_f32(shift[ch + k]));
    }
  });
}

void prelu_bias(std::span<bf16_t> buf, TiledShape shape, std::span<const bf16_t> alpha, std::span<const bf16_t> bias,
                int threads) {
  for_each_channel_run(shape, threads, [&](std::size_t at, std::size_t ch) {
    for (std::size_t k = 0; k < 8; ++k) {
      const float t = bf16_to_f32(f32_to_bf16(bf16_to_f32(buf[at + k]) + bf16_to_f32(bias[ch + k])));
      buf[at + k] = f32_to_bf16(t < 0.0f ? bf16_to_f32(alpha[ch + k]) * t : t);
    }
  });
}

void bias(std::span<bf16_t> buf, TiledShape shape, std::span<const bf16_t> bias, int threads) {
  for_each_channel_run(shape, threads, [&](std::size_t at, std::size_t ch) {
    for (std::size_t k = 0; k < 8; ++k) buf[at + k] = f32_to_bf16(bf16_to_f32(buf[at + k]) + bf16_to_f32(bias[ch + k]));
  });
}

void add(std::span<const bf16_t> a, std::span<const bf16_t> b, std::span<bf16_t> out, std::size_t elements, int threads) {
#pragma omp parallel for num_threads(threads_for(elements, threads)) schedule(static)
  for (std::size_t i = 0; i < elements; ++i) out[i] = f32_to_bf16(bf16_to_f32(a[i]) + bf16_to_f32(b[i]));
}

void subsample(std::span<const bf16_t> in, std::span<bf16_t> out, TiledShape in_shape, int stride) {
  const std::size_t c = static_cast<std::size_t>(in_shape.c), s = static_cast<std::size_t>(stride);
  const std::size_t in_w = static_cast<std::size_t>(in_shape.w);
  const std::size_t out_h = in_shape.h / s, out_w = in_w / s;
  for (std::size_t y = 0; y < out_h; ++y)
    for (std::size_t cg = 0; cg < c / 8; ++cg)
      for (std::size_t x = 0; x < out_w; ++x)
        std::memcpy(&out[tiled_index(c, out_w, cg * 8, y, x)], &in[tiled_index(c, in_w, cg * 8, y * s, x * s)],
                    8 * sizeof(bf16_t));
}

void slice_channel_groups(std::span<const bf16_t> in, TiledShape in_shape, int c0, int icg, int wp,
                          std::span<bf16_t> slice) {
  const std::size_t groups = static_cast<std::size_t>(icg / 8), in_groups = static_cast<std::size_t>(in_shape.c / 8);
  const std::size_t w = static_cast<std::size_t>(in_shape.w), padded = static_cast<std::size_t>(wp);
  for (std::size_t y = 0; y < static_cast<std::size_t>(in_shape.h); ++y)
    for (std::size_t g = 0; g < groups; ++g) {
      bf16_t* dst = &slice[((y * groups + g) * padded) * 8];
      const bf16_t* src = &in[((y * in_groups + static_cast<std::size_t>(c0) + g) * w) * 8];
      std::memcpy(dst, src, w * 8 * sizeof(bf16_t));
      std::fill(dst + w * 8, dst + padded * 8, bf16_t{0});
    }
}

void accumulate(std::span<const bf16_t> dispatch, std::span<float> acc, bool first, int threads) {
  const std::size_t n = dispatch.size();
  if (first) {
#pragma omp parallel for num_threads(threads_for(n, threads)) schedule(static)
    for (std::size_t i = 0; i < n; ++i) acc[i] = bf16_to_f32(dispatch[i]);
  } else {
#pragma omp parallel for num_threads(threads_for(n, threads)) schedule(static)
    for (std::size_t i = 0; i < n; ++i) acc[i] += bf16_to_f32(dispatch[i]);
  }
}

void finish_conv(std::span<const float> acc, int oc, int oh, int ow, int owp, std::span<bf16_t> out) {
  const std::size_t rows = static_cast<std::size_t>(oh) * (oc / 8);
  const std::size_t kept = static_cast<std::size_t>(ow) * 8, padded = static_cast<std::size_t>(owp) * 8;
  for (std::size_t row = 0; row < rows; ++row)
    for (std::size_t i = 0; i < kept; ++i) out[row * kept + i] = f32_to_bf16(acc[row * padded + i]);
}

void head(std::span<const bf16_t> in, TiledShape shape, std::span<const bf16_t> weights_t, std::span<const float> bias,
          std::size_t n, std::span<float> out, int threads) {
  // Channel-major input, widened to f32.
  std::vector<float> x(shape.elements());
  std::size_t i = 0;
  for (int ch = 0; ch < shape.c; ++ch)
    for (int y = 0; y < shape.h; ++y)
      for (int col = 0; col < shape.w; ++col)
        x[i++] = bf16_to_f32(in[tiled_index(static_cast<std::size_t>(shape.c), static_cast<std::size_t>(shape.w),
                                            static_cast<std::size_t>(ch), static_cast<std::size_t>(y),
                                            static_cast<std::size_t>(col))]);
  // Each output column sums over i in order 0..k-1; columns are split across threads in blocks.
  constexpr std::size_t kBlock = 64;
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for num_threads(std::max(threads, 1)) schedule(static)
  for (std::size_t block = 0; block < blocks; ++block) {
    const std::size_t j0 = block * kBlock, j1 = std::min(n, j0 + kBlock);
    float acc[kBlock] = {};
    for (std::size_t k = 0; k < x.size(); ++k) {
      const float xk = x[k];
      const bf16_t* row = &weights_t[k * n];
      for (std::size_t j = j0; j < j1; ++j) acc[j - j0] += xk * bf16_to_f32(row[j]);
    }
    for (std::size_t j = j0; j < j1; ++j) out[j] = bias[j] + acc[j - j0];
  }
}

void tile_input(std::span<const float> chw, int channels, TiledShape shape, std::span<bf16_t> tiled) {
  std::fill(tiled.begin(), tiled.end(), bf16_t{0});
  const std::size_t c = static_cast<std::size_t>(shape.c), h = static_cast<std::size_t>(shape.h),
                    w = static_cast<std::size_t>(shape.w);
  for (std::size_t ch = 0; ch < static_cast<std::size_t>(channels); ++ch)
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t x = 0; x < w; ++x) tiled[tiled_index(c, w, ch, y, x)] = f32_to_bf16(chw[(ch * h + y) * w + x]);
}

}  // namespace taconite::numerics

#include "numerics/host_glue.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "numerics/tiled_layout.hpp"

// Hot loops are cloned for x86-64-v3 (AVX2) and baseline x86-64 and picked at run time by the CPU's
// features. No FMA is involved: this file is compiled with -ffp-contract=off, and AVX2 keeps the
// separate multiply and add roundings of spec §4.1.
#define TACONITE_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))

namespace taconite::numerics {

namespace {

// Below this many elements a parallel region costs more than it saves.
constexpr std::size_t kParallelThreshold = 1 << 15;

int threads_for(std::size_t elements, int threads) { return elements < kParallelThreshold ? 1 : std::max(threads, 1); }

// A tiled buffer is rows of [w][8]: row r holds channel group r % (c/8) of image row r / (c/8).
struct ChannelRows {
  std::size_t rows, groups, width;
  explicit ChannelRows(TiledShape s)
      : rows(static_cast<std::size_t>(s.h) * (s.c / 8)), groups(static_cast<std::size_t>(s.c / 8)),
        width(static_cast<std::size_t>(s.w)) {}
};

// Eight lanes of bf16 / f32 / u32 as GCC vectors: one lane per channel of a tiled [x][8] run.
// The operations are the scalar ones of bf16.hpp lane by lane, so results are bit-identical.
using v8f = float __attribute__((vector_size(32)));
using v8u = std::uint32_t __attribute__((vector_size(32)));
using v8h = std::uint16_t __attribute__((vector_size(16)));

inline v8f load_bf16x8(const bf16_t* p) {
  v8h half;
  std::memcpy(&half, p, sizeof half);
  const v8u bits = __builtin_convertvector(half, v8u) << 16;
  v8f f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Lane-wise f32_to_bf16 (RNE, NaN -> 0x7fc0), the result in the low 16 bits of each lane.
inline v8u bf16_bits(v8f f) {
  v8u bits;
  std::memcpy(&bits, &f, sizeof bits);
  const v8u nan_mask = (v8u)((bits & 0x7fffffffu) > 0x7f800000u);
  const v8u rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  return (rounded & ~nan_mask) | (0x7fc0u & nan_mask);
}

inline void store_bf16x8(bf16_t* p, v8f f) {
  const v8h half = __builtin_convertvector(bf16_bits(f), v8h);
  std::memcpy(p, &half, sizeof half);
}

inline v8f load_f32x8(const float* p) {
  v8f f;
  std::memcpy(&f, p, sizeof f);
  return f;
}

inline v8f round_to_bf16x8(v8f f) {
  const v8u widened = bf16_bits(f) << 16;
  v8f rounded;
  std::memcpy(&rounded, &widened, sizeof rounded);
  return rounded;
}

TACONITE_VECTOR_CLONES void affine_row(const bf16_t* in, bf16_t* out, std::size_t width, const bf16_t* scale8,
                                       const bf16_t* shift8) {
  const v8f scale = load_bf16x8(scale8), shift = load_bf16x8(shift8);
  for (std::size_t x = 0; x < width; ++x) {
    const v8f scaled = load_bf16x8(in + x * 8) * scale;
    store_bf16x8(out + x * 8, scaled + shift);
  }
}

TACONITE_VECTOR_CLONES void prelu_bias_row(bf16_t* buf, std::size_t width, const bf16_t* alpha8, const bf16_t* bias8) {
  const v8f alpha = load_bf16x8(alpha8), bias = load_bf16x8(bias8);
  for (std::size_t x = 0; x < width; ++x) {
    const v8f t = round_to_bf16x8(load_bf16x8(buf + x * 8) + bias);
    const v8f negative = alpha * t;
    store_bf16x8(buf + x * 8, t < 0.0f ? negative : t);
  }
}

TACONITE_VECTOR_CLONES void bias_row(bf16_t* buf, std::size_t width, const bf16_t* bias8) {
  const v8f bias = load_bf16x8(bias8);
  for (std::size_t x = 0; x < width; ++x) store_bf16x8(buf + x * 8, load_bf16x8(buf + x * 8) + bias);
}

// Flat loops: whole vectors, then a scalar tail.
TACONITE_VECTOR_CLONES void add_range(const bf16_t* a, const bf16_t* b, bf16_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) store_bf16x8(out + i, load_bf16x8(a + i) + load_bf16x8(b + i));
  for (; i < n; ++i) out[i] = f32_to_bf16(bf16_to_f32(a[i]) + bf16_to_f32(b[i]));
}

TACONITE_VECTOR_CLONES void widen_range(const bf16_t* in, float* acc, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v8f f = load_bf16x8(in + i);
    std::memcpy(acc + i, &f, sizeof f);
  }
  for (; i < n; ++i) acc[i] = bf16_to_f32(in[i]);
}

TACONITE_VECTOR_CLONES void accumulate_range(const bf16_t* in, float* acc, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v8f f = load_f32x8(acc + i) + load_bf16x8(in + i);
    std::memcpy(acc + i, &f, sizeof f);
  }
  for (; i < n; ++i) acc[i] += bf16_to_f32(in[i]);
}

TACONITE_VECTOR_CLONES void narrow_range(const float* in, bf16_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) store_bf16x8(out + i, load_f32x8(in + i));
  for (; i < n; ++i) out[i] = f32_to_bf16(in[i]);
}

TACONITE_VECTOR_CLONES void canonical_copy_range(const bf16_t* in, bf16_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) store_bf16x8(out + i, load_bf16x8(in + i));
  for (; i < n; ++i) out[i] = f32_to_bf16(bf16_to_f32(in[i]));
}

// Head columns j0..j0+kHeadBlock: acc[j] = sum over i in order of x[i]*bT[i][j].
constexpr std::size_t kHeadBlock = 64;
TACONITE_VECTOR_CLONES void head_block(const float* x, std::size_t k, const bf16_t* weights_t, std::size_t n,
                                       std::size_t j0, float* out /* kHeadBlock */) {
  constexpr std::size_t kVectors = kHeadBlock / 8;
  v8f acc[kVectors] = {};
  for (std::size_t i = 0; i < k; ++i) {
    const float xi = x[i];
    const bf16_t* row = weights_t + i * n + j0;
    for (std::size_t v = 0; v < kVectors; ++v) acc[v] += xi * load_bf16x8(row + v * 8);
  }
  std::memcpy(out, acc, sizeof acc);
}

// Runs row_fn(row, channel_group) over every row of a tiled buffer, in parallel when it pays.
template <typename RowFn>
void for_each_row(TiledShape shape, int threads, RowFn&& row_fn) {
  const ChannelRows r(shape);
#pragma omp parallel for num_threads(threads_for(shape.elements(), threads)) schedule(static)
  for (std::size_t row = 0; row < r.rows; ++row) row_fn(row, row % r.groups);
}

// Runs range_fn(begin, count) over [0, n) in a few contiguous chunks, in parallel when it pays.
template <typename RangeFn>
void for_each_chunk(std::size_t n, int threads, RangeFn&& range_fn) {
  const int used = threads_for(n, threads);
  const std::size_t chunk = (n + static_cast<std::size_t>(used) - 1) / static_cast<std::size_t>(used);
#pragma omp parallel for num_threads(used) schedule(static)
  for (int part = 0; part < used; ++part) {
    const std::size_t begin = static_cast<std::size_t>(part) * chunk;
    if (begin < n) range_fn(begin, std::min(chunk, n - begin));
  }
}

}  // namespace

void affine(std::span<const bf16_t> in, std::span<bf16_t> out, TiledShape shape, std::span<const bf16_t> scale,
            std::span<const bf16_t> shift, int threads) {
  const std::size_t w = static_cast<std::size_t>(shape.w);
  for_each_row(shape, threads, [&](std::size_t row, std::size_t cg) {
    affine_row(&in[row * w * 8], &out[row * w * 8], w, &scale[cg * 8], &shift[cg * 8]);
  });
}

void prelu_bias(std::span<bf16_t> buf, TiledShape shape, std::span<const bf16_t> alpha, std::span<const bf16_t> bias,
                int threads) {
  const std::size_t w = static_cast<std::size_t>(shape.w);
  for_each_row(shape, threads, [&](std::size_t row, std::size_t cg) {
    prelu_bias_row(&buf[row * w * 8], w, &alpha[cg * 8], &bias[cg * 8]);
  });
}

void bias(std::span<bf16_t> buf, TiledShape shape, std::span<const bf16_t> bias, int threads) {
  const std::size_t w = static_cast<std::size_t>(shape.w);
  for_each_row(shape, threads, [&](std::size_t row, std::size_t cg) { bias_row(&buf[row * w * 8], w, &bias[cg * 8]); });
}

void add(std::span<const bf16_t> a, std::span<const bf16_t> b, std::span<bf16_t> out, std::size_t elements, int threads) {
  for_each_chunk(elements, threads,
                 [&](std::size_t begin, std::size_t count) { add_range(&a[begin], &b[begin], &out[begin], count); });
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
  for_each_chunk(dispatch.size(), threads, [&](std::size_t begin, std::size_t count) {
    if (first) widen_range(&dispatch[begin], &acc[begin], count);
    else accumulate_range(&dispatch[begin], &acc[begin], count);
  });
}

void finish_conv(std::span<const float> acc, int oc, int oh, int ow, int owp, std::span<bf16_t> out) {
  const std::size_t rows = static_cast<std::size_t>(oh) * (oc / 8);
  const std::size_t kept = static_cast<std::size_t>(ow) * 8, padded = static_cast<std::size_t>(owp) * 8;
  for (std::size_t row = 0; row < rows; ++row) narrow_range(&acc[row * padded], &out[row * kept], kept);
}

void crop_single_dispatch(std::span<const bf16_t> dispatch, int oc, int oh, int ow, int owp, std::span<bf16_t> out) {
  const std::size_t rows = static_cast<std::size_t>(oh) * (oc / 8);
  const std::size_t kept = static_cast<std::size_t>(ow) * 8, padded = static_cast<std::size_t>(owp) * 8;
  for (std::size_t row = 0; row < rows; ++row) canonical_copy_range(&dispatch[row * padded], &out[row * kept], kept);
}

void head(std::span<const bf16_t> in, TiledShape shape, std::span<const bf16_t> weights_t, std::span<const float> bias,
          std::size_t n, std::span<float> out, int threads) {
  // Channel-major input (i = (ch*h + y)*w + x), widened to f32.
  std::vector<float> x(shape.elements());
  const std::size_t c = static_cast<std::size_t>(shape.c), h = static_cast<std::size_t>(shape.h),
                    w = static_cast<std::size_t>(shape.w);
  for (std::size_t ch = 0; ch < c; ++ch)
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t col = 0; col < w; ++col) x[(ch * h + y) * w + col] = bf16_to_f32(in[tiled_index(c, w, ch, y, col)]);

  // Whole column blocks go to the vector kernel, in parallel; a ragged tail is summed plainly.
  const std::size_t blocks = n / kHeadBlock;
#pragma omp parallel for num_threads(std::max(threads, 1)) schedule(static)
  for (std::size_t block = 0; block < blocks; ++block) {
    float acc[kHeadBlock];
    head_block(x.data(), x.size(), weights_t.data(), n, block * kHeadBlock, acc);
    for (std::size_t j = 0; j < kHeadBlock; ++j) out[block * kHeadBlock + j] = bias[block * kHeadBlock + j] + acc[j];
  }
  for (std::size_t j = blocks * kHeadBlock; j < n; ++j) {
    float acc = 0.0f;
    for (std::size_t i = 0; i < x.size(); ++i) acc += x[i] * bf16_to_f32(weights_t[i * n + j]);
    out[j] = bias[j] + acc;
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

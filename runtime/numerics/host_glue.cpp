#include "numerics/host_glue.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "numerics/bf16_lanes.hpp"
#include "numerics/tiled_layout.hpp"

// Hot loops are cloned for x86-64-v3 (AVX2) and baseline x86-64 and picked at run time by the CPU's
// features. No FMA is involved: this file is compiled with -ffp-contract=off, and AVX2 keeps the
// separate multiply and add roundings of spec §4.1.
#define TACONITE_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))

namespace taconite::numerics {

namespace {

using namespace lanes;

// A tiled buffer is rows of [w][8]: row r holds channel group r % (c/8) of image row r / (c/8).
struct ChannelRows {
  std::size_t rows, groups, width;
  explicit ChannelRows(TiledShape s)
      : rows(static_cast<std::size_t>(s.h) * (s.c / 8)), groups(static_cast<std::size_t>(s.c / 8)),
        width(static_cast<std::size_t>(s.w)) {}
};

// Per-pixel kernels take two pixels at a time (lanes::Pair, per-channel constants duplicated to
// match) and an odd last pixel alone; flat kernels take 16 elements at a time, then 8, then one.

TACONITE_VECTOR_CLONES void affine_row(const bf16_t* in, bf16_t* out, std::size_t width, const bf16_t* scale8,
                                       const bf16_t* shift8) {
  const Pair scale = channel_pair(scale8), shift = channel_pair(shift8);
  std::size_t x = 0;
  for (; x + 2 <= width; x += 2) {
    const Pair v = load_bf16x16(in + x * 8);
    store_bf16x16(out + x * 8, {v.lo * scale.lo + shift.lo, v.hi * scale.hi + shift.hi});
  }
  if (x < width) store_bf16x8(out + x * 8, load_bf16x8(in + x * 8) * load_bf16x8(scale8) + load_bf16x8(shift8));
}

// t = bf16(x + bias); t < 0 ? alpha*t : t (rounded by the store).
inline v8f prelu_bias_lanes(v8f x, v8f alpha, v8f bias) {
  const v8f t = round_bf16(x + bias);
  return t < 0.0f ? alpha * t : t;
}

TACONITE_VECTOR_CLONES void prelu_bias_row(bf16_t* buf, std::size_t width, const bf16_t* alpha8, const bf16_t* bias8) {
  const Pair alpha = channel_pair(alpha8), bias = channel_pair(bias8);
  std::size_t x = 0;
  for (; x + 2 <= width; x += 2) {
    const Pair v = load_bf16x16(buf + x * 8);
    store_bf16x16(buf + x * 8, {prelu_bias_lanes(v.lo, alpha.lo, bias.lo), prelu_bias_lanes(v.hi, alpha.hi, bias.hi)});
  }
  if (x < width)
    store_bf16x8(buf + x * 8, prelu_bias_lanes(load_bf16x8(buf + x * 8), load_bf16x8(alpha8), load_bf16x8(bias8)));
}

TACONITE_VECTOR_CLONES void bias_row(bf16_t* buf, std::size_t width, const bf16_t* bias8) {
  const Pair bias = channel_pair(bias8);
  std::size_t x = 0;
  for (; x + 2 <= width; x += 2) {
    const Pair v = load_bf16x16(buf + x * 8);
    store_bf16x16(buf + x * 8, {v.lo + bias.lo, v.hi + bias.hi});
  }
  if (x < width) store_bf16x8(buf + x * 8, load_bf16x8(buf + x * 8) + load_bf16x8(bias8));
}

TACONITE_VECTOR_CLONES void add_range(const bf16_t* a, const bf16_t* b, bf16_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const Pair x = load_bf16x16(a + i), y = load_bf16x16(b + i);
    store_bf16x16(out + i, {x.lo + y.lo, x.hi + y.hi});
  }
  for (; i + 8 <= n; i += 8) store_bf16x8(out + i, load_bf16x8(a + i) + load_bf16x8(b + i));
  for (; i < n; ++i) out[i] = f32_to_bf16(bf16_to_f32(a[i]) + bf16_to_f32(b[i]));
}

TACONITE_VECTOR_CLONES void sum_range(const bf16_t* a, const bf16_t* b, float* sum, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) store_f32x8(sum + i, load_bf16x8(a + i) + load_bf16x8(b + i));
  for (; i < n; ++i) sum[i] = bf16_to_f32(a[i]) + bf16_to_f32(b[i]);
}

TACONITE_VECTOR_CLONES void accumulate_range(const bf16_t* in, float* acc, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) store_f32x8(acc + i, load_f32x8(acc + i) + load_bf16x8(in + i));
  for (; i < n; ++i) acc[i] += bf16_to_f32(in[i]);
}

TACONITE_VECTOR_CLONES void add_narrow_range(const float* acc, const bf16_t* in, bf16_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) store_bf16x8(out + i, load_f32x8(acc + i) + load_bf16x8(in + i));
  for (; i < n; ++i) out[i] = f32_to_bf16(acc[i] + bf16_to_f32(in[i]));
}

// f32_to_bf16(bf16_to_f32(v)) keeps every bit pattern but NaNs, which become 0x7fc0: done on the
// 16-bit patterns directly.
TACONITE_VECTOR_CLONES void canonical_copy_range(const bf16_t* in, bf16_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v16h v;
    std::memcpy(&v, in + i, sizeof v);
    const v16h canonical_nan = v16h{} + 0x7fc0;
    const v16h canonical = (v & 0x7fff) > 0x7f80 ? canonical_nan : v;
    std::memcpy(out + i, &canonical, sizeof canonical);
  }
  for (; i < n; ++i) out[i] = f32_to_bf16(bf16_to_f32(in[i]));
}

// One column block of the head: acc[j] = sum over i in order of x[i]*block[i][j], j < kBlock.
// HeadWeights stores each run of 16 columns so that load_bf16x16 yields them in natural order.
TACONITE_VECTOR_CLONES void head_block(const float* x, std::size_t k, const bf16_t* block, float* out /* kBlock */) {
  constexpr std::size_t kPairs = HeadWeights::kBlock / 16;
  Pair acc[kPairs] = {};
  for (std::size_t i = 0; i < k; ++i) {
    const float xi = x[i];
    const bf16_t* row = block + i * HeadWeights::kBlock;
    for (std::size_t p = 0; p < kPairs; ++p) {
      const Pair w = load_bf16x16(row + p * 16);
      acc[p].lo += xi * w.lo;
      acc[p].hi += xi * w.hi;
    }
  }
  for (std::size_t p = 0; p < kPairs; ++p) {
    store_f32x8(out + p * 16, acc[p].lo);
    store_f32x8(out + p * 16 + 8, acc[p].hi);
  }
}

}  // namespace

void affine(std::span<const bf16_t> in, std::span<bf16_t> out, TiledShape shape, std::span<const bf16_t> scale,
            std::span<const bf16_t> shift) {
  const ChannelRows r(shape);
  for (std::size_t row = 0; row < r.rows; ++row) {
    const std::size_t cg = row % r.groups;
    affine_row(&in[row * r.width * 8], &out[row * r.width * 8], r.width, &scale[cg * 8], &shift[cg * 8]);
  }
}

void prelu_bias(std::span<bf16_t> buf, TiledShape shape, std::span<const bf16_t> alpha, std::span<const bf16_t> bias) {
  const ChannelRows r(shape);
  for (std::size_t row = 0; row < r.rows; ++row) {
    const std::size_t cg = row % r.groups;
    prelu_bias_row(&buf[row * r.width * 8], r.width, &alpha[cg * 8], &bias[cg * 8]);
  }
}

void bias(std::span<bf16_t> buf, TiledShape shape, std::span<const bf16_t> bias) {
  const ChannelRows r(shape);
  for (std::size_t row = 0; row < r.rows; ++row) bias_row(&buf[row * r.width * 8], r.width, &bias[(row % r.groups) * 8]);
}

void add(std::span<const bf16_t> a, std::span<const bf16_t> b, std::span<bf16_t> out) {
  add_range(a.data(), b.data(), out.data(), out.size());
}

void subsample(std::span<const bf16_t> in, std::span<bf16_t> out, TiledShape in_shape, int stride) {
  // In place, front to back is safe: every pixel is written at or before where it was read, and
  // below every pixel still to be read.
  const std::size_t c = static_cast<std::size_t>(in_shape.c), s = static_cast<std::size_t>(stride);
  const std::size_t in_w = static_cast<std::size_t>(in_shape.w);
  const std::size_t out_h = in_shape.h / s, out_w = in_w / s;
  for (std::size_t y = 0; y < out_h; ++y)
    for (std::size_t cg = 0; cg < c / 8; ++cg)
      for (std::size_t x = 0; x < out_w; ++x)
        std::memmove(&out[tiled_index(c, out_w, cg * 8, y, x)], &in[tiled_index(c, in_w, cg * 8, y * s, x * s)],
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

void sum_records(std::span<const bf16_t> first, std::span<const bf16_t> second, std::span<float> sum) {
  sum_range(first.data(), second.data(), sum.data(), sum.size());
}

void accumulate(std::span<const bf16_t> dispatch, std::span<float> acc) {
  accumulate_range(dispatch.data(), acc.data(), dispatch.size());
}

void finish_conv(EarlierRecords earlier, std::span<const bf16_t> dispatch, int oc, int oh, int ow, int owp,
                 std::span<bf16_t> out) {
  const std::size_t rows = static_cast<std::size_t>(oh) * (oc / 8);
  const std::size_t kept = static_cast<std::size_t>(ow) * 8, padded = static_cast<std::size_t>(owp) * 8;
  for (std::size_t row = 0; row < rows; ++row) {
    const std::size_t from = row * padded, to = row * kept;
    if (!earlier.sum.empty()) add_narrow_range(&earlier.sum[from], &dispatch[from], &out[to], kept);
    else if (!earlier.first.empty()) add_range(&earlier.first[from], &dispatch[from], &out[to], kept);
    else canonical_copy_range(&dispatch[from], &out[to], kept);
  }
}

HeadWeights::HeadWeights(std::span<const bf16_t> weights_t, std::size_t k, std::size_t n)
    : k_(k), n_(n), blocks_((n + kBlock - 1) / kBlock), data_(blocks_ * k * kBlock, bf16_t{0}) {
  // Within each 16 columns, quads 1 and 2 trade places: load_bf16x16 puts memory quads 0, 2 in its
  // low half and 1, 3 in its high half, so the loaded lanes come out as columns 0-7 and 8-15.
  constexpr std::size_t kStoredQuad[4] = {0, 2, 1, 3};
  for (std::size_t block = 0; block < blocks_; ++block) {
    const std::size_t j0 = block * kBlock, columns = std::min(kBlock, n - j0);
    for (std::size_t i = 0; i < k; ++i) {
      const bf16_t* from = &weights_t[i * n + j0];
      bf16_t* to = &data_[(block * k + i) * kBlock];
      for (std::size_t quad = 0; quad * 4 < columns; ++quad)
        std::copy_n(from + quad * 4, std::min<std::size_t>(4, columns - quad * 4),
                    to + quad / 4 * 16 + kStoredQuad[quad % 4] * 4);
    }
  }
}

void head(std::span<const bf16_t> in, TiledShape shape, const HeadWeights& weights, std::span<const float> bias,
          std::span<float> out, int threads) {
  // Channel-major input (i = (ch*h + y)*w + x), widened to f32.
  std::vector<float> x(shape.elements());
  const std::size_t c = static_cast<std::size_t>(shape.c), h = static_cast<std::size_t>(shape.h),
                    w = static_cast<std::size_t>(shape.w);
  for (std::size_t ch = 0; ch < c; ++ch)
    for (std::size_t y = 0; y < h; ++y)
      for (std::size_t col = 0; col < w; ++col) x[(ch * h + y) * w + col] = bf16_to_f32(in[tiled_index(c, w, ch, y, col)]);

  const std::size_t n = weights.n();
#pragma omp parallel for num_threads(std::max(threads, 1)) schedule(static)
  for (std::size_t block = 0; block < weights.blocks(); ++block) {
    float acc[HeadWeights::kBlock];
    head_block(x.data(), weights.k(), weights.block(block), acc);
    const std::size_t j0 = block * HeadWeights::kBlock;
    for (std::size_t j = j0; j < std::min(n, j0 + HeadWeights::kBlock); ++j) out[j] = bias[j] + acc[j - j0];
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

// The host-side operations between NPU dispatches, with the exact numerics of spec §4.1 / §5.1
// / §6. Buffers are tiled bf16 [h][c/8][w][8]. Compiled with -ffp-contract=off (no FMA), so the
// results are bit-exact with the reference implementation.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "numerics/bf16.hpp"

namespace taconite::numerics {

struct TiledShape {
  int c, h, w;
  std::size_t elements() const { return static_cast<std::size_t>(c) * h * w; }
};

// Every operation below is single-threaded and elementwise along image rows, so a band of rows
// [y0, y1) of a tiled buffer is itself a tiled buffer (c, y1-y0, w) at element offset y0*c*w: the
// replay executor parallelises and fuses them band by band.

// out = bf16(x*scale[c] + shift[c]); in and out may be the same buffer.
void affine(std::span<const bf16_t> in, std::span<bf16_t> out, TiledShape shape, std::span<const bf16_t> scale,
            std::span<const bf16_t> shift);
// t = bf16(x+bias[c]); x = bf16(t<0 ? alpha[c]*t : t), in place.
void prelu_bias(std::span<bf16_t> buf, TiledShape shape, std::span<const bf16_t> alpha, std::span<const bf16_t> bias);
// x = bf16(x+bias[c]), in place.
void bias(std::span<bf16_t> buf, TiledShape shape, std::span<const bf16_t> bias);
// out = bf16(a+b) over out.size() elements; out may alias a or b.
void add(std::span<const bf16_t> a, std::span<const bf16_t> b, std::span<bf16_t> out);
// out(c, y, x) = in(c, s*y, s*x) with out dims (c, h/s, w/s). out is either `in` itself (in
// place) or does not overlap it.
void subsample(std::span<const bf16_t> in, std::span<bf16_t> out, TiledShape in_shape, int stride);

// Copies channel groups c0 .. c0+icg/8-1 of `in` into a [h][icg/8][wp][8] slice; columns >= w are zero.
void slice_channel_groups(std::span<const bf16_t> in, TiledShape in_shape, int c0, int icg, int wp,
                          std::span<bf16_t> slice);
// A conv's records are summed in f32 in file order (spec §5.1). The second record of a conv of
// three or more starts the sum from the first two: sum = f32(first) + f32(second).
void sum_records(std::span<const bf16_t> first, std::span<const bf16_t> second, std::span<float> sum);
// Every later record but the last: acc += f32(dispatch).
void accumulate(std::span<const bf16_t> dispatch, std::span<float> acc);

// What a conv's earlier records left for its last one: nothing (one record), the first record's
// output (two records), or the f32 sum of all earlier records (three or more).
struct EarlierRecords {
  std::span<const bf16_t> first;
  std::span<const float> sum;
};
// A conv's last record: out = bf16(earlier + f32(dispatch)) with the padded width owp cropped to
// ow: [oh][oc/8][owp][8] -> [oh][oc/8][ow][8]. With no earlier records that is a canonical copy
// (NaNs become 0x7fc0); f32(first) + f32(dispatch) equals summing from an f32 accumulator.
void finish_conv(EarlierRecords earlier, std::span<const bf16_t> dispatch, int oc, int oh, int ow, int owp,
                 std::span<bf16_t> out);

// The head's bT [k][n] regrouped once into column blocks of kBlock, each [k][kBlock] contiguous
// (columns >= n zero): a thread streams its blocks front to back instead of striding n apart
// across 25 MB, which made the head TLB-bound.
class HeadWeights {
 public:
  static constexpr std::size_t kBlock = 64;
  HeadWeights(std::span<const bf16_t> weights_t, std::size_t k, std::size_t n);
  std::size_t k() const { return k_; }
  std::size_t n() const { return n_; }
  std::size_t blocks() const { return blocks_; }
  const bf16_t* block(std::size_t b) const { return data_.data() + b * k_ * kBlock; }

 private:
  std::size_t k_, n_, blocks_;
  std::vector<bf16_t> data_;
};

// e[j] = b2[j] + sum_i x[i]*bT[i*n+j] summed in order of i, x the tiled input read channel-major
// (i = (ch*h+y)*w+x).
void head(std::span<const bf16_t> in, TiledShape shape, const HeadWeights& weights, std::span<const float> bias,
          std::span<float> out, int threads);

// The caller's CHW f32 image (channels <= shape.c) -> bf16 (RNE), tiled, missing channels zero.
void tile_input(std::span<const float> chw, int channels, TiledShape shape, std::span<bf16_t> tiled);

}  // namespace taconite::numerics

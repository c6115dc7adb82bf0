// The host-side operations between NPU dispatches, with the exact numerics of spec §4.1 / §5.1
// / §6. Buffers are tiled bf16 [h][c/8][w][8]. Compiled with -ffp-contract=off (no FMA), so the
// results are bit-exact with the reference implementation. `threads` bounds OpenMP parallelism.
#pragma once

#include <cstddef>
#include <span>

#include "numerics/bf16.hpp"

namespace taconite::numerics {

struct TiledShape {
  int c, h, w;
  std::size_t elements() const { return static_cast<std::size_t>(c) * h * w; }
};

// out = bf16(x*scale[c] + shift[c]); in and out may be the same buffer.
void affine(std::span<const bf16_t> in, std::span<bf16_t> out, TiledShape shape, std::span<const bf16_t> scale,
            std::span<const bf16_t> shift, int threads);
// t = bf16(x+bias[c]); x = bf16(t<0 ? alpha[c]*t : t), in place.
void prelu_bias(std::span<bf16_t> buf, TiledShape shape, std::span<const bf16_t> alpha, std::span<const bf16_t> bias,
                int threads);
// x = bf16(x+bias[c]), in place.
void bias(std::span<bf16_t> buf, TiledShape shape, std::span<const bf16_t> bias, int threads);
// out = bf16(a+b); out may alias a or b.
void add(std::span<const bf16_t> a, std::span<const bf16_t> b, std::span<bf16_t> out, std::size_t elements, int threads);
// out(c, y, x) = in(c, s*y, s*x) with out dims (c, h/s, w/s). in and out must not overlap.
void subsample(std::span<const bf16_t> in, std::span<bf16_t> out, TiledShape in_shape, int stride);

// Copies channel groups c0 .. c0+icg/8-1 of `in` into a [h][icg/8][wp][8] slice; columns >= w are zero.
void slice_channel_groups(std::span<const bf16_t> in, TiledShape in_shape, int c0, int icg, int wp,
                          std::span<bf16_t> slice);
// acc (+)= f32(dispatch); with `first` the accumulator starts from zero.
void accumulate(std::span<const bf16_t> dispatch, std::span<float> acc, bool first, int threads);
// Crops the padded width owp to ow and rounds to bf16: acc [h][oc/8][owp][8] -> out [h][oc/8][ow][8].
void finish_conv(std::span<const float> acc, int oc, int oh, int ow, int owp, std::span<bf16_t> out);
// The same for a conv of one record: crop the dispatch output directly. Equal bit for bit to
// accumulate(first) + finish_conv (a bf16 value survives f32 and back; NaNs become 0x7fc0).
void crop_single_dispatch(std::span<const bf16_t> dispatch, int oc, int oh, int ow, int owp, std::span<bf16_t> out);

// e[j] = b2[j] + sum_i x[i]*bT[i*n+j], x the tiled input read channel-major (i = (ch*h+y)*w+x).
void head(std::span<const bf16_t> in, TiledShape shape, std::span<const bf16_t> weights_t,
          std::span<const float> bias, std::size_t n, std::span<float> out, int threads);

// The caller's CHW f32 image (channels <= shape.c) -> bf16 (RNE), tiled, missing channels zero.
void tile_input(std::span<const float> chw, int channels, TiledShape shape, std::span<bf16_t> tiled);

}  // namespace taconite::numerics

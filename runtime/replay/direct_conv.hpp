// A plain f32 direct convolution (stride 1, zero padding kernel/2), vectorised and threaded.
// Used by the cpu-reference device: with bf16-valued inputs and weights every product is exact
// in f32, so fused multiply-add changes nothing and only the summation order is unspecified.
#pragma once

#include <span>
#include <vector>

#include "numerics/bf16.hpp"

namespace taconite::replay {

struct ConvGeometry {
  int in_channels, out_channels, h, w, kernel;  // kernel 1 or 3
};

// Converts a tiled slice [h][ic/8][wp][8] (true width g.w) into the zero-bordered planar
// layout direct_conv() reads.
void planar_input_from_tiled(std::span<const numerics::bf16_t> slice, const ConvGeometry& g, int wp,
                             std::vector<float>& planar);

// out[o][y][x] = sum_{i,ky,kx} w[o][i][ky][kx] * in[i][y+ky-p][x+kx-p]. `weights` is OIHW f32,
// `out` is [oc][h][w] f32.
void direct_conv(const ConvGeometry& g, std::span<const float> planar, std::span<const float> weights,
                 std::span<float> out, int threads);

}  // namespace taconite::replay

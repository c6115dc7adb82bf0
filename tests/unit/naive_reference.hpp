// A plain, channel-major re-computation of the fixture network written without the runtime's
// numerics (no tiled layout, no packing, its own bf16 rounding), so a replay can be checked
// against something that shares none of its code.
#pragma once

#include <vector>

#include "bundle_fixture.hpp"

namespace taconite::testing {

// Round-to-nearest-even to bf16 via frexp/nearbyint (finite, normal values; ties to even).
float naive_round_bf16(float value);

// out[o][y][x] = sum over (i, ky, kx) in that order of w[o][i][ky][kx] * in[i][y+ky-p][x+kx-p],
// f32 accumulation, stride 1, zero padding p = kernel/2. in is [ic][h][w], w is OIHW. Not rounded.
std::vector<float> naive_conv(const std::vector<float>& in, int ic, int h, int w, const std::vector<float>& weights,
                              int oc, int kernel);

// The fixture network's embedding from its unpacked model (spec §4.1, §5.1, §6).
std::vector<float> naive_fixture_embedding(const FixtureModel& model);

}  // namespace taconite::testing

#include "replay/direct_conv.hpp"

#include <algorithm>
#include <cstring>

#include "common/per_thread_scratch.hpp"

namespace taconite::replay {

namespace {

using v8f = float __attribute__((vector_size(32)));
constexpr int kLanes = 8;

// Planar layout: [ic][h + 2p][row_stride] with the image at (p, p); row_stride leaves room for
// whole 8-lane vectors past the right edge so the inner loop never needs a tail.
struct PlanarLayout {
  int pad, rows, row_stride;
  explicit PlanarLayout(const ConvGeometry& g)
      : pad(g.kernel / 2), rows(g.h + 2 * (g.kernel / 2)),
        row_stride(((g.w + kLanes - 1) / kLanes) * kLanes + 2 * kLanes) {}
};

v8f load(const float* p) {
  v8f v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Eight output channels x eight columns of one row, accumulated in registers.
__attribute__((target_clones("arch=x86-64-v3", "default"))) void conv_block_row(
    const ConvGeometry& g, const PlanarLayout& L, const float* planar, const float* packed_weights, int y,
    float* out_block /* [8][w] */) {
  const int k = g.kernel;
  for (int x0 = 0; x0 < g.w; x0 += kLanes) {
    v8f acc[8] = {};
    for (int i = 0; i < g.in_channels; ++i) {
      for (int ky = 0; ky < k; ++ky) {
        const float* row = planar + (static_cast<std::size_t>(i) * L.rows + y + ky) * L.row_stride + x0;
        const float* wrow = packed_weights + (static_cast<std::size_t>(i) * k + ky) * k * 8;
        for (int kx = 0; kx < k; ++kx) {
          const v8f xv = load(row + kx);
          for (int o = 0; o < 8; ++o) acc[o] += xv * wrow[kx * 8 + o];
        }
      }
    }
    const int lanes = std::min(kLanes, g.w - x0);
    for (int o = 0; o < 8; ++o)
      for (int l = 0; l < lanes; ++l) out_block[static_cast<std::size_t>(o) * g.w + x0 + l] = acc[o][l];
  }
}

}  // namespace

void planar_input_from_tiled(std::span<const numerics::bf16_t> slice, const ConvGeometry& g, int wp,
                             std::vector<float>& planar) {
  const PlanarLayout L(g);
  planar.assign(static_cast<std::size_t>(g.in_channels) * L.rows * L.row_stride, 0.0f);
  const int groups = g.in_channels / 8;
  for (int y = 0; y < g.h; ++y)
    for (int grp = 0; grp < groups; ++grp)
      for (int x = 0; x < g.w; ++x)
        for (int c8 = 0; c8 < 8; ++c8) {
          const std::size_t src = ((static_cast<std::size_t>(y) * groups + grp) * wp + x) * 8 + c8;
          const std::size_t dst =
              (static_cast<std::size_t>(grp * 8 + c8) * L.rows + y + L.pad) * L.row_stride + x + L.pad;
          planar[dst] = numerics::bf16_to_f32(slice[src]);
        }
}

void direct_conv(const ConvGeometry& g, std::span<const float> planar, std::span<const float> weights,
                 std::span<float> out, int threads) {
  const PlanarLayout L(g);
  const int k = g.kernel, kk = k * k, ic = g.in_channels;
  // Re-block OIHW weights as [o/8][i][ky][kx][8] so one broadcast feeds one output lane.
  std::vector<float> blocked(weights.size());
  for (int o = 0; o < g.out_channels; ++o)
    for (int i = 0; i < ic; ++i)
      for (int t = 0; t < kk; ++t)
        blocked[((static_cast<std::size_t>(o / 8) * ic + i) * kk + t) * 8 + o % 8] =
            weights[(static_cast<std::size_t>(o) * ic + i) * kk + t];

  const int blocks = g.out_channels / 8;
  const std::size_t plane = static_cast<std::size_t>(g.h) * g.w;
  PerThreadScratch<float> scratch(threads, static_cast<std::size_t>(8) * g.w);
#pragma omp parallel num_threads(std::max(threads, 1))
  {
    const std::span<float> row_out = scratch.mine();
#pragma omp for collapse(2) schedule(static)
    for (int ob = 0; ob < blocks; ++ob)
      for (int y = 0; y < g.h; ++y) {
        conv_block_row(g, L, planar.data(), blocked.data() + static_cast<std::size_t>(ob) * ic * kk * 8, y,
                       row_out.data());
        for (int o = 0; o < 8; ++o)
          std::memcpy(&out[(static_cast<std::size_t>(ob) * 8 + o) * plane + static_cast<std::size_t>(y) * g.w],
                      &row_out[static_cast<std::size_t>(o) * g.w], sizeof(float) * g.w);
      }
  }
}

}  // namespace taconite::replay

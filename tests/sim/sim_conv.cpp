#include "sim_conv.hpp"

#include <algorithm>
#include <vector>

#include "numerics/tiled_layout.hpp"
#include "numerics/weight_packing.hpp"
#include "replay/direct_conv.hpp"

namespace taconite::sim {

using numerics::bf16_t;

ConvArgumentBytes conv_argument_bytes(const mkbundle::ConvDescriptor& d) {
  const std::size_t bf16 = sizeof(bf16_t);
  return {std::size_t{d.h} * d.icg * d.wp * bf16, std::size_t{d.oc} * d.icg * d.kernel * d.kernel * bf16,
          std::size_t{d.h} * d.oc * d.owp * bf16};
}

void compute_placeholder_conv(const mkbundle::ConvDescriptor& d, std::span<const bf16_t> slice,
                              std::span<const bf16_t> packed_weights, std::span<bf16_t> out) {
  const numerics::ConvWeightShape shape{d.oc, d.icg, d.kernel};
  std::vector<bf16_t> oihw(shape.elements());
  numerics::unpack_conv_weights(shape, packed_weights.first(shape.elements()), oihw);
  std::vector<float> weights(oihw.size());
  std::transform(oihw.begin(), oihw.end(), weights.begin(), numerics::bf16_to_f32);

  const replay::ConvGeometry g{static_cast<int>(d.icg), static_cast<int>(d.oc), static_cast<int>(d.h),
                               static_cast<int>(d.w), static_cast<int>(d.kernel)};
  std::vector<float> planar, result(std::size_t{d.oc} * d.h * d.w);
  replay::planar_input_from_tiled(slice, g, static_cast<int>(d.wp), planar);
  replay::direct_conv(g, planar, weights, result, 1);

  const std::size_t elements = std::size_t{d.h} * d.oc * d.owp;
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(elements), bf16_t{0});
  for (std::size_t o = 0; o < d.oc; ++o)
    for (std::size_t y = 0; y < d.h; ++y)
      for (std::size_t x = 0; x < d.w; ++x)
        out[numerics::tiled_index(d.oc, d.owp, o, y, x)] = numerics::f32_to_bf16(result[(o * d.h + y) * d.w + x]);
}

}  // namespace taconite::sim

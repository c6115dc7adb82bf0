#include "numerics/weight_packing.hpp"

namespace taconite::numerics {

std::size_t packed_weight_index(const ConvWeightShape& shape, std::size_t o, std::size_t i, std::size_t ky,
                                std::size_t kx) {
  const std::size_t og = o / 8, o8 = o % 8, ig = i / 8, i8 = i % 8;
  const std::size_t block = (og * (shape.in_channels / 8) + ig) * shape.kernel * shape.kernel + ky * shape.kernel + kx;
  return block * 64 + i8 * 8 + o8;
}

namespace {
template <typename Visit>
void for_each_weight(const ConvWeightShape& shape, Visit&& visit) {
  std::size_t oihw = 0;
  for (std::size_t o = 0; o < shape.out_channels; ++o)
    for (std::size_t i = 0; i < shape.in_channels; ++i)
      for (std::size_t ky = 0; ky < shape.kernel; ++ky)
        for (std::size_t kx = 0; kx < shape.kernel; ++kx) visit(oihw++, packed_weight_index(shape, o, i, ky, kx));
}
}  // namespace

void pack_conv_weights(const ConvWeightShape& shape, std::span<const bf16_t> oihw, std::span<bf16_t> packed) {
  for_each_weight(shape, [&](std::size_t plain, std::size_t tiled) { packed[tiled] = oihw[plain]; });
}

void unpack_conv_weights(const ConvWeightShape& shape, std::span<const bf16_t> packed, std::span<bf16_t> oihw) {
  for_each_weight(shape, [&](std::size_t plain, std::size_t tiled) { oihw[plain] = packed[tiled]; });
}

}  // namespace taconite::numerics

// The activation layout of spec §4: bf16 [H, C/8, W, 8]. One index function for everyone.
#pragma once

#include <cstddef>

namespace taconite::numerics {

// Element (ch, y, x) of a tiled buffer with `channels` channels (a multiple of 8) and `width` columns.
constexpr std::size_t tiled_index(std::size_t channels, std::size_t width, std::size_t ch, std::size_t y,
                                  std::size_t x) {
  return ((y * (channels / 8) + ch / 8) * width + x) * 8 + (ch % 8);
}

}  // namespace taconite::numerics

// Seeded synthetic "faces": smooth RGB images in [-1, 1] (the cvlface input range), channel-major.
#pragma once

#include <cstdint>

#include "fp32_ops.hpp"

namespace taconite::mkbundle {

// [n][3][height][width]; image i depends only on (seed, i).
Tensor4 random_faces(int n, int height, int width, std::uint64_t seed);

}  // namespace taconite::mkbundle

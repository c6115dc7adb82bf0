// The ASSUMED NPU conv weight packing of spec §5.3, kept in exactly one pack/unpack pair.
// If a real bundle shows another layout, only weight_packing.cpp changes.
//
//   3x3: wt[(((og*(icg/8) + ig)*3 + ky)*3 + kx)*64 + i8*8 + o8] = W[8*og+o8][8*ig+i8][ky][kx]
//   1x1: wt[(og*(icg/8) + ig)*64 + i8*8 + o8]                    = W[8*og+o8][8*ig+i8]
#pragma once

#include <cstddef>
#include <span>

#include "numerics/bf16.hpp"

namespace taconite::numerics {

struct ConvWeightShape {
  std::size_t out_channels;  // oc, multiple of 8
  std::size_t in_channels;   // icg, multiple of 8 (this dispatch's input channels)
  std::size_t kernel;        // 1 or 3
  std::size_t elements() const { return out_channels * in_channels * kernel * kernel; }
};

// oihw: plain row-major W[o][i][ky][kx]. Both spans must hold shape.elements() values.
void pack_conv_weights(const ConvWeightShape& shape, std::span<const bf16_t> oihw, std::span<bf16_t> packed);
void unpack_conv_weights(const ConvWeightShape& shape, std::span<const bf16_t> packed, std::span<bf16_t> oihw);

// Position in the packed tensor of W[o][i][ky][kx].
std::size_t packed_weight_index(const ConvWeightShape& shape, std::size_t o, std::size_t i, std::size_t ky,
                                std::size_t kx);

}  // namespace taconite::numerics

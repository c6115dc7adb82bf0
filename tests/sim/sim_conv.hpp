// What the simulated NPU computes for one placeholder kernel: the conv its descriptor names, with
// exactly the cpu-reference math (spec bundle.md §5.2), so npu-direct on the simulator and
// cpu-reference give bit-identical embeddings.
#pragma once

#include <cstddef>
#include <span>

#include "mkbundle/placeholder_kernel.hpp"
#include "numerics/bf16.hpp"

namespace taconite::sim {

struct ConvArgumentBytes {
  std::size_t slice, weights, output;
};
ConvArgumentBytes conv_argument_bytes(const mkbundle::ConvDescriptor& d);

// out: tiled [h][oc/8][owp][8], padded columns zero. Spans must hold conv_argument_bytes().
void compute_placeholder_conv(const mkbundle::ConvDescriptor& d, std::span<const numerics::bf16_t> slice,
                              std::span<const numerics::bf16_t> packed_weights, std::span<numerics::bf16_t> out);

}  // namespace taconite::sim

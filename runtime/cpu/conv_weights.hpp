// A merged conv's weights in plain OIHW, built once at load from its input-channel-group
// records through the single unpack function of spec §5.3 (numerics::unpack_conv_weights).
#pragma once

#include <vector>

#include "cpu/fused_graph.hpp"

namespace taconite::cpu {

// W[o][i][ky][kx] over all `in_channels` of the conv's input, as bf16 bits (T = bf16_t) or
// widened to float; channels no record covers are zero.
template <typename T>
std::vector<T> merged_conv_weights(const FusedOp& conv, int in_channels, int threads);

}  // namespace taconite::cpu

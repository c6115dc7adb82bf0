// A merged conv's weights in plain OIHW, built once at load from its input-channel-group
// records through the single unpack function of spec §5.3 (numerics::unpack_conv_weights).
#pragma once

#include <span>

#include "cpu/fused_graph.hpp"

namespace taconite::cpu {

// Writes W[o][i][ky][kx] over all `in_channels` of the conv's input into `oihw` (oc*in_channels*k*k
// values), as bf16 bits (T = bf16_t) or widened to float; channels no record covers are zero.
template <typename T>
void merge_conv_weights(const FusedOp& conv, int in_channels, std::span<T> oihw, int threads);

}  // namespace taconite::cpu

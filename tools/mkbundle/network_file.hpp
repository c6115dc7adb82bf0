// Reads an extracted network (taconite-import's hand-off to this writer): network.txt describes
// the IR graph, network.bin holds its f32 tensors in the order network.txt implies. Every
// BatchNorm arrives already reduced to a per-channel scale and shift (a conv's own bias folded
// in), so the emitter folds and packs trained weights exactly as it does synthetic ones.
//
// network.txt (one record a line):
//   taconite-network 1
//   name <model name>                    the bundle's `param model`
//   comment <text>                       the manifest's first line
//   param <name> <value...>              copied into the manifest
//   stem <channels>                      conv3x3 3->channels, scale, shift, PReLU alpha
//   unit <in> <out> <stride> pool|conv   BN, conv3x3, scale/shift, alpha, conv3x3, scale/shift[, conv1x1, scale/shift]
//   head <c> <h> <w> <n>                 BN2d scale/shift, Linear weight [n][c*h*w] and bias, BN1d scale/shift
// network.bin, f32 little-endian, in record order, then the face [3][h][w] and its fp32 embedding [n].
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "fp32_ops.hpp"
#include "ir_network.hpp"

namespace taconite::mkbundle {

struct ExtractedNetwork {
  IrNetwork net;
  Tensor4 face;                        // [1][3][h][w], in the network's channel order
  std::vector<float> cpu_embedding;    // the original graph's own fp32 forward of `face`
  std::map<std::string, std::string> params;
  std::string comment;
};

// Throws std::runtime_error naming network.txt:<line> or network.bin on anything malformed.
ExtractedNetwork read_network_file(const std::filesystem::path& dir);

}  // namespace taconite::mkbundle

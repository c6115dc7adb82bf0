// Turns a calibrated IrNetwork into a bundle directory in the exact format of spec §2-§5/§9:
// BN folded into conv weights (W*s[o]) with prelu_bias/bias steps, each unit's leading BN as an
// `affine`, stride 2 as a stride-1 conv + `subsample`, the head folded into one `head` record,
// weights packed by the runtime's one pack function, placeholder kernels per distinct conv shape.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "fp32_ops.hpp"
#include "grouping.hpp"
#include "ir_network.hpp"

namespace taconite::mkbundle {

struct EmitOptions {
  Grouping grouping = Grouping::Tile;
  std::map<std::string, std::string> params;  // extra `param` records (name -> value)
  std::string comment;                        // the manifest's first line, after "# "
};

struct EmitSummary {
  int steps = 0;         // step records (input .. head)
  int conv_records = 0;  // NPU dispatches
  int convs = 0;         // network convs (a conv may span several records)
  int contexts = 0;      // distinct ctx (conv shapes)
  std::uint64_t tensor_bytes = 0;
};

// Writes manifest.txt, tensors.bin/txt (with ref.input, ref.input_chw, ref.cpu_embedding) and
// kernels/ into `dir`, which must exist. `image` is one [1][3][h][w] face.
EmitSummary emit_bundle(const IrNetwork& net, const Tensor4& image, const std::vector<float>& cpu_embedding,
                        const std::filesystem::path& dir, const EmitOptions& options);

// NPU kernels need widths that are multiples of 4: 14 -> 16, 7 -> 8; 112/56/28 stay.
int padded_width(int width);

}  // namespace taconite::mkbundle

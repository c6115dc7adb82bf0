// cpu-reference: emulates one NPU conv dispatch exactly as spec §5.2 describes (stride 1, zero
// padding 1 for 3x3 on the true width, bf16 x bf16 products accumulated in f32, one RNE
// rounding per output). Matches the NPU by cosine, not bit for bit (its order is unpublished).
#pragma once

#include <memory>

#include "replay/conv_device.hpp"

namespace taconite::replay {

std::unique_ptr<ConvDevice> make_cpu_reference_device(int threads);

}  // namespace taconite::replay

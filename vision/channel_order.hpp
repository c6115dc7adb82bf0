// The order of the colour planes a network is fed. The elements expose it as a property (its GType
// is registered in gst/plugin/enums.cpp); the preprocessing takes Rgb or Bgr.
#pragma once

namespace taconite::vision {

enum class ChannelOrder : int {
  Rgb = 0,  // the bundle's contract (cvlface)
  Bgr = 1,  // for checkpoints trained on BGR input (AdaFace's inference.py)
  Auto = 2, // the bundle's param input_channel_order (rgb when it has none); resolved once the bundle loads
};

}  // namespace taconite::vision

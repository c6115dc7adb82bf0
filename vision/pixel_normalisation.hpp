// How 8-bit RGB pixels become a network's input planes: the planes' order and each plane's
// (pixel/255 - mean[c]) / std_dev[c]. Always taken from the model (taconite::Model::preprocessing():
// a bundle's cvlface 0.5/0.5, an ONNX model's description), never assumed here.
#pragma once

#include <array>

#include "channel_order.hpp"
#include "taconite/model.hpp"

namespace taconite::vision {

struct PixelNormalisation {
  ChannelOrder order = ChannelOrder::Rgb;  // Rgb or Bgr (Auto is resolved before)
  std::array<float, 3> mean{};             // per output plane
  std::array<float, 3> std_dev{};          // per output plane, not 0
};

// The model's normalisation, with its channel order.
inline PixelNormalisation normalisation_of(const taconite::Preprocessing& p) {
  return {p.channel_order == taconite::PlaneOrder::Bgr ? ChannelOrder::Bgr : ChannelOrder::Rgb, p.mean, p.std_dev};
}

}  // namespace taconite::vision

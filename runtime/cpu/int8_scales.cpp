#include "cpu/int8_scales.hpp"

#include <algorithm>
#include <cmath>

namespace taconite::cpu {

InputQuantization quantize_input(std::span<const float> ranges, std::size_t channels) {
  InputQuantization out;
  if (ranges.size() != channels) ranges = {};
  if (ranges.empty()) {
    out.channel_scales.assign(channels, 1.0f);
    out.multipliers.assign(channels, 1.0f);
    return out;
  }
  const float largest = ranges.empty() ? 0.0f : *std::max_element(ranges.begin(), ranges.end());
  out.tensor_scale = largest > 0.0f ? 127.0f / largest : 1.0f;
  for (const float range : ranges) {
    const float t = range > 0.0f ? std::pow(largest / range, kEqualizeStrength) : 1.0f;
    out.multipliers.push_back(t);
    out.channel_scales.push_back(out.tensor_scale * t);
  }
  return out;
}

std::vector<float> weight_scales(std::span<const float> oihw, int oc) {
  const std::size_t per_channel = oc > 0 ? oihw.size() / static_cast<std::size_t>(oc) : 0;
  std::vector<float> scales(static_cast<std::size_t>(std::max(oc, 0)));
  for (std::size_t o = 0; o < scales.size(); ++o) {
    float largest = 0.0f;
    for (std::size_t i = 0; i < per_channel; ++i) largest = std::max(largest, std::abs(oihw[o * per_channel + i]));
    scales[o] = largest > 0.0f ? 127.0f / largest : 1.0f;
  }
  return scales;
}

}  // namespace taconite::cpu

// The int8 convs' scales (pure arithmetic, no oneDNN, so testable alone). A conv reads its f32
// input x quantized per input channel c as round(x * q * t[c]) and its weights as
// round(W[o][c] / t[c] * s[o]): the products sum to q * s[o] * conv(x, W), which the conv's output
// scale 1 / (q * s[o]) undoes. t (>= 1) lifts channels whose range is small towards the largest
// (q = 127 / the largest range), so a quiet channel is not left with a few of the 255 levels, and
// the weights, which quantize well per output channel, absorb 1 / t (cf. SmoothQuant; partial,
// t = (largest / range)^kEqualizeStrength, so the weights keep most of their own precision).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace taconite::cpu {

inline constexpr float kEqualizeStrength = 0.5f;

struct InputQuantization {
  std::vector<float> channel_scales;  // q * t[c]: the input's reorder multiplies channel c by this
  std::vector<float> multipliers;     // t[c]: the weights of input channel c are divided by this
  float tensor_scale = 1.0f;          // q
};

// For an input of `channels` channels from its per-channel ranges (largest |x| seen in calibration).
// Ranges of another size (none: placeholder weights) or all zero give unit scales; channels never
// seen non-zero (e.g. the stem's padding channels) get t = 1.
InputQuantization quantize_input(std::span<const float> ranges, std::size_t channels);

// 127 / max |w| per output channel of `oihw` (oc rows; 1 for an all-zero channel).
std::vector<float> weight_scales(std::span<const float> oihw, int oc);

}  // namespace taconite::cpu

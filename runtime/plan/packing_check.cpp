#include "plan/packing_check.hpp"

#include <functional>

#include "numerics/tiled_layout.hpp"

namespace taconite::plan {

namespace {

// The stem sees 3 real channels padded to 8; the recorded input shows how many are real.
int real_input_channels(const InputStep& input) {
  int real = 0;
  for (int ch = 0; ch < input.dims.c; ++ch)
    for (int y = 0; y < input.dims.h && real <= ch; ++y)
      for (int x = 0; x < input.dims.w; ++x)
        if (input.recorded[numerics::tiled_index(input.dims.c, input.dims.w, ch, y, x)] != 0) {
          real = ch + 1;
          break;
        }
  return real;
}

bool zero_wherever(std::span<const bf16_t> weights, const std::function<bool(std::size_t)>& must_be_zero) {
  for (std::size_t i = 0; i < weights.size(); ++i)
    if (must_be_zero(i) && weights[i] != 0) return false;
  return true;
}

}  // namespace

std::optional<std::string> check_stem_zero_pattern(const Plan& plan) {
  const InputStep& input = plan.input_step();
  const ConvStep* stem = nullptr;
  for (const Step& step : plan.steps)
    if (const auto* conv = std::get_if<ConvStep>(&step); conv && conv->in == input.buf && conv->icg == 8) {
      stem = conv;
      break;
    }
  const int real = real_input_channels(input);
  if (stem == nullptr || stem->c0 != 0 || real == 0 || real >= 8 || input.recorded.empty()) return std::nullopt;

  const std::size_t kk = static_cast<std::size_t>(stem->kernel) * stem->kernel;
  const std::size_t r = static_cast<std::size_t>(real);
  if (zero_wherever(stem->weights, [&](std::size_t i) { return i % 64 >= 8 * r; })) return std::nullopt;
  std::string other = "an unknown layout";
  if (zero_wherever(stem->weights, [&](std::size_t i) { return i % 8 >= r; })) other = "an [o8][i8] inner order";
  else if (zero_wherever(stem->weights, [&](std::size_t i) { return (i / kk) % 8 >= r; })) other = "plain OIHW";
  return "manifest.txt:" + std::to_string(stem->line) +
         ": the stem conv's weights lack the zero pattern of the assumed packing (spec §5.3); they look like " +
         other + ". Embeddings from a CPU backend will be wrong until the packing is confirmed.";
}

}  // namespace taconite::plan

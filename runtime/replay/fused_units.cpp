#include "replay/fused_units.hpp"

#include <optional>

namespace taconite::replay {

namespace {

// The dims of a step that can join a banded unit; none for the others.
std::optional<plan::Dims> elementwise_dims(const plan::Step& step) {
  if (const auto* s = std::get_if<plan::AffineStep>(&step)) return s->dims;
  if (const auto* s = std::get_if<plan::PreluBiasStep>(&step)) return s->dims;
  if (const auto* s = std::get_if<plan::BiasStep>(&step)) return s->dims;
  if (const auto* s = std::get_if<plan::AddStep>(&step)) return s->dims;
  return std::nullopt;
}

// The dims of a step that can start a banded unit.
std::optional<plan::Dims> banded_head_dims(const plan::Step& step) {
  if (const auto* conv = std::get_if<plan::ConvStep>(&step))
    return conv->last ? std::optional<plan::Dims>(plan::Dims{conv->oc, conv->oh, conv->ow}) : std::nullopt;
  return elementwise_dims(step);
}

// The end of the conv whose first record is steps[first] if its input has dims `dims`, otherwise
// `first`. A conv's records are consecutive steps (build_plan refuses anything in between).
std::size_t conv_records_end(const std::vector<plan::Step>& steps, std::size_t first, const plan::Dims& dims) {
  const auto* head = first < steps.size() ? std::get_if<plan::ConvStep>(&steps[first]) : nullptr;
  if (head == nullptr || !head->first || plan::Dims{head->ict, head->h, head->w} != dims) return first;
  std::size_t end = first;
  while (!std::get<plan::ConvStep>(steps[end]).last) ++end;
  return end + 1;
}

}  // namespace

std::vector<ReplayUnit> group_replay_units(const plan::Plan& plan) {
  std::vector<ReplayUnit> units;
  const std::vector<plan::Step>& steps = plan.steps;
  for (std::size_t i = 0; i < steps.size();) {
    ReplayUnit unit;
    unit.first = i;
    unit.end = i + 1;
    if (const std::optional<plan::Dims> dims = banded_head_dims(steps[i])) {
      unit.banded = true;
      unit.dims = *dims;
      while (unit.end < steps.size() && elementwise_dims(steps[unit.end]) == dims) ++unit.end;
      unit.slices_end = conv_records_end(steps, unit.end, *dims);
    }
    units.push_back(unit);
    i = unit.end;
  }
  return units;
}

}  // namespace taconite::replay

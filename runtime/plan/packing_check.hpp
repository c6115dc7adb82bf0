// The stem zero-pattern check of spec §5.3: detects, without an NPU, that a real bundle's conv
// weights are packed differently from the assumed layout. Diagnostic only, never an error.
#pragma once

#include <optional>
#include <string>

#include "plan/plan.hpp"

namespace taconite::plan {

// A warning when the stem conv's weights do not show the assumed layout's zero pattern
// (nullopt when they do, or when the check does not apply).
std::optional<std::string> check_stem_zero_pattern(const Plan& plan);

}  // namespace taconite::plan

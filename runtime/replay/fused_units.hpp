// How the replay executor groups a plan's steps so intermediates stay in cache.
#pragma once

#include <cstddef>
#include <vector>

#include "plan/plan.hpp"

namespace taconite::replay {

// Steps [first, end) of the plan. A banded unit is replayed band by band of image rows: every step
// of the unit is applied to rows [y0, y1) before the next band, and bands run in parallel. It
// starts at an elementwise step (affine, prelu_bias, bias, add) or at a conv's last record (whose
// banded part is the finish: add the accumulator, crop, round) and takes in the following
// elementwise steps while their dims equal its own. Every element still sees the file's order of
// operations, so the results equal step-by-step replay bit for bit. Other steps are units of one.
//
// When the steps right after a banded unit are all the records of one conv whose input has the
// unit's dims, the unit also cuts those records' input slices, band by band, while the rows are
// still in cache: nothing between the unit and the records can change the input.
struct ReplayUnit {
  std::size_t first = 0, end = 0;
  bool banded = false;
  plan::Dims dims;            // of every banded step (a conv's output dims)
  std::size_t slices_end = 0; // > end: the unit slices the conv records [end, slices_end)
};

// The units covering every step of the plan, in order.
std::vector<ReplayUnit> group_replay_units(const plan::Plan& plan);

}  // namespace taconite::replay

// The seam between the replay executor and whatever runs one NPU conv dispatch: the exact CPU
// emulation (cpu-reference) or a real/simulated NPU (npu-direct, npu-xrt).
#pragma once

#include <span>
#include <string>

#include "numerics/bf16.hpp"
#include "plan/plan.hpp"

namespace taconite::replay {

// One `conv` record's dispatch, with the three kernel arguments of spec §5.1.
struct ConvDispatch {
  const plan::ConvStep& step;
  const plan::KernelContext& context;        // xclbin, kernel name, instruction stream
  std::span<const numerics::bf16_t> input;   // the slice, tiled [h][icg/8][wp][8]; columns >= w are zero
  std::span<const numerics::bf16_t> weights; // `wt` exactly as stored (packed, spec §5.3)
  std::span<numerics::bf16_t> output;        // tiled [oh][oc/8][owp][8]; the device writes all of it
};

class ConvDevice {
 public:
  virtual ~ConvDevice() = default;
  virtual std::string name() const = 0;
  // Runs one dispatch. Throws Failure(Device) naming the failing call; must leave the device
  // usable for a following dispatch when it can.
  virtual void run(const ConvDispatch& dispatch) = 0;

  // Zero-copy staging: a device whose argument buffers are host-mapped may lend them, so the
  // executor slices straight into the input argument and accumulates straight from the output
  // argument. Empty (the default) means the executor uses its own buffers and the device copies.
  // A lent span stays valid for the device's lifetime and is only touched between runs. There are
  // two output buffers (`which` 0 or 1): a conv's records alternate between them, so the executor
  // sums the first two records straight from the device's buffers.
  virtual std::span<numerics::bf16_t> staging_input(std::size_t /*elements*/) { return {}; }
  virtual std::span<numerics::bf16_t> staging_output(std::size_t /*elements*/, int /*which*/) { return {}; }
};

}  // namespace taconite::replay

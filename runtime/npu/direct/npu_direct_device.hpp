// npu-direct: a ConvDevice that runs each conv dispatch on the NPU through the amdxdna ioctls
// (no XRT). Opening it opens the device (TACONITE_NPU_DEVICE, default /dev/accel/accel0), maps
// the heap and uploads every conv's weights once; contexts load on first use into the shared LRU
// cache. Not thread-safe (one forward at a time).
#pragma once

#include <memory>

#include "plan/plan.hpp"
#include "replay/conv_device.hpp"

namespace taconite::npu {

// Throws Failure(Device) naming the driver call and errno when the device cannot be opened.
std::unique_ptr<replay::ConvDevice> make_npu_direct_device(const plan::Plan& plan);

}  // namespace taconite::npu

// npu-direct: a ConvDevice that runs each conv dispatch on the NPU through the amdxdna ioctls
// (no XRT). Opening it opens the device (NpuSettings::device_path, through NpuSettings::driver), maps
// the heap and uploads every conv's weights once; contexts load on first use into the shared LRU
// cache. Not thread-safe (one forward at a time: the replay backend serialises its sessions).
#pragma once

#include <memory>

#include "npu/npu_settings.hpp"
#include "plan/plan.hpp"
#include "replay/conv_device.hpp"

namespace taconite::npu {

// Throws Failure(Device) naming the driver call and errno when the device cannot be opened.
std::unique_ptr<replay::ConvDevice> make_npu_direct_device(const plan::Plan& plan, const NpuSettings& settings);

}  // namespace taconite::npu

// npu-xrt: a ConvDevice that runs each conv dispatch through XRT's C++ API (npu-xrt.md §3):
// device 0, register_xclbin + hw_context per resident context (the shared LRU cache), a
// cacheable instruction BO, host_only argument BOs reused across runs, opcode-3 calling
// convention, run/wait with a state check. Every XRT exception is caught here and becomes
// Failure(Device). Built against XRT < 2.15 (no xrt::hw_context) opening it fails with
// "XRT <version> found; running on an NPU needs XRT >= 2.15 (xrt::hw_context)".
#pragma once

#include <memory>
#include <string>

#include "npu/npu_settings.hpp"
#include "plan/plan.hpp"
#include "replay/conv_device.hpp"

namespace taconite::npu {

std::unique_ptr<replay::ConvDevice> make_npu_xrt_device(const plan::Plan& plan, const NpuSettings& settings);

// "2.13", the XRT this library was built against.
std::string built_xrt_version();

}  // namespace taconite::npu

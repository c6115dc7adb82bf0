// The one thin seam every amdxdna driver call goes through (taconite/npu_driver.hpp), so tests can
// substitute a simulated device (tests/sim) through LoadOptions::npu_driver.
#pragma once

#include <memory>

#include "taconite/model.hpp"
#include "taconite/npu_driver.hpp"

namespace taconite::npu {

using DriverSeam = NpuDriver;

// The real driver (plain libc calls).
std::shared_ptr<DriverSeam> make_libc_driver_seam();

// The driver `factory` makes, or the libc one when it is empty.
std::shared_ptr<DriverSeam> make_driver_seam(const NpuDriverFactory& factory);

}  // namespace taconite::npu

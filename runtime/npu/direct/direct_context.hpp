// One resident hardware context of the direct path (npu-direct.md §1 steps 6-11): the hwctx and
// its syncobj, the PDI configured as CU 0, the instruction stream in a DEV BO, and one CMD BO
// (one run in flight at a time). Released in the spec's teardown order.
#pragma once

#include <cstdint>
#include <memory>

#include "npu/context_cache.hpp"
#include "npu/direct/amdxdna_device.hpp"
#include "npu/npu_settings.hpp"
#include "plan/plan.hpp"

namespace taconite::npu {

// Reads and checks a context's xclbin and instruction stream without touching the device, so
// load() refuses a bundle whose kernel files are unusable (a forward must not fail on bundle
// content). Throws Failure(Device) naming the file.
void check_context_files(const plan::KernelContext& context);

class DirectContext final : public ResidentContext {
 public:
  // Throws ContextRefused when CREATE_HWCTX is refused (the cache may evict and retry),
  // Failure(Device) for anything else (unreadable/unsupported xclbin or insts, other driver errors).
  DirectContext(AmdxdnaDevice& device, const plan::KernelContext& context, const NpuSettings& settings);
  ~DirectContext() override;

  std::uint32_t hwctx() const { return hwctx_; }
  std::uint32_t syncobj() const { return syncobj_; }
  const DeviceBo& instructions() const { return *instructions_; }
  const DeviceBo& command() const { return *command_; }
  std::uint32_t ninstr() const { return ninstr_; }
  // A run timed out: the firmware may still own the CMD and argument BOs, so teardown destroys
  // the hardware context (which waits for/aborts the job) before freeing any buffer, and leaks
  // the CMD and instruction BOs if that destruction fails (npu-direct.md §8.6, §13 item 7).
  void abandon_in_flight_run() { run_abandoned_ = true; }

 private:
  bool destroy_hwctx() noexcept;  // false when DESTROY_HWCTX failed

  AmdxdnaDevice& device_;
  std::uint32_t hwctx_ = 0, syncobj_ = 0;
  bool run_abandoned_ = false;
  std::uint32_t ninstr_ = 0;
  std::unique_ptr<DeviceBo> pdi_, instructions_, command_;
};

}  // namespace taconite::npu

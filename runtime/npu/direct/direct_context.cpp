#include "npu/direct/direct_context.hpp"

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/failure.hpp"
#include "npu/direct/cache_maintenance.hpp"
#include "npu/direct/driver_error.hpp"
#include "npu/direct/xclbin.hpp"
#include "npu/kernel_files.hpp"

namespace taconite::npu {

namespace {

// After a refusal: how many contexts the device runs now, all processes together (spec §13 item
// 8). Empty when the driver has no GET_ARRAY (older kernels answer EINVAL).
std::string contexts_in_use(AmdxdnaDevice& device) {
  constexpr std::uint32_t kMaxEntries = 64;
  std::vector<uapi::HwctxEntry> entries(kMaxEntries);
  uapi::GetArray query{};
  query.param = uapi::kArrayHwContextAll;
  query.element_size = sizeof(uapi::HwctxEntry);
  query.num_element = kMaxEntries;
  query.buffer = reinterpret_cast<std::uintptr_t>(entries.data());
  if (device.ioctl_status(uapi::kIoctlGetArray, &query) != 0) return {};
  return ", " + std::to_string(query.num_element) + " hardware contexts in use on the device (all processes)";
}

std::string where(const plan::KernelContext& context) {
  return "context '" + context.key + "' (manifest.txt:" + std::to_string(context.xclbin_line) + ")";
}

}  // namespace

void check_context_files(const plan::KernelContext& context) {
  (void)read_xclbin(context.xclbin);
  (void)read_instruction_stream(context.insts);
}

DirectContext::DirectContext(AmdxdnaDevice& device, const plan::KernelContext& context, const NpuSettings& settings)
    : device_(device) {
  // Files first: a bad xclbin must not cost a hardware-context slot.
  const XclbinPartition partition = read_xclbin(context.xclbin);
  const std::vector<std::byte> instructions = read_instruction_stream(context.insts);
  const uapi::AieMetadata& aie = device.aie_metadata();
  if (partition.column_width > aie.cols)
    fail(ErrorKind::Device, context.xclbin.string() + ": partition is " + std::to_string(partition.column_width) +
                                " columns wide but the NPU has " + std::to_string(aie.cols));

  uapi::QosInfo qos{};  // all zero: no QoS request (the DPM level stays at the driver's choice)
  uapi::CreateHwctx create{};
  create.qos_p = reinterpret_cast<std::uintptr_t>(&qos);
  create.max_opc = partition.operations_per_cycle;
  create.num_tiles = static_cast<std::uint32_t>(partition.column_width) * aie.core.row_count;
  if (const int error = device.ioctl_status(uapi::kIoctlCreateHwctx, &create); error != 0) {
    const std::string detail = where(context) + ", " + std::to_string(create.num_tiles) + " tiles" +
                               (error == EINVAL ? contexts_in_use(device) : std::string());
    if (error == EINVAL || error == ENOENT || error == ENODEV) refuse_context("CREATE_HWCTX", error, detail);
    fail_driver_call("CREATE_HWCTX", error, detail);
  }
  hwctx_ = create.handle;
  syncobj_ = create.syncobj_handle;
  try {
    pdi_ = std::make_unique<DeviceBo>(device, uapi::kBoDev, partition.pdi.size());
    std::memcpy(pdi_->host(), partition.pdi.data(), partition.pdi.size());
    flush_cache_range(pdi_->host(), partition.pdi.size());

    uapi::CuConfigBlob cu{};
    cu.num_cus = 1;
    cu.cu_bo = pdi_->handle();
    cu.cu_func = partition.cu_function;
    uapi::ConfigHwctx config{};
    config.handle = hwctx_;
    config.param_type = uapi::kConfigCu;
    config.param_val = reinterpret_cast<std::uintptr_t>(&cu);
    config.param_val_size = sizeof cu;
    if (const int error = device.ioctl_status(uapi::kIoctlConfigHwctx, &config); error != 0)
      fail_driver_call("CONFIG_HWCTX(CONFIG_CU)", error, where(context));

    instructions_ = std::make_unique<DeviceBo>(device, uapi::kBoDev, instructions.size());
    std::memcpy(instructions_->host(), instructions.data(), instructions.size());
    flush_cache_range(instructions_->host(), instructions.size());
    ninstr_ = ninstr_value(instructions.size(), settings.ninstr_unit);

    command_ = std::make_unique<DeviceBo>(device, uapi::kBoCmd, uapi::kCmdBoSize);
  } catch (...) {
    command_.reset();
    instructions_.reset();
    destroy_hwctx();
    pdi_.reset();
    throw;
  }
}

DirectContext::~DirectContext() {
  if (run_abandoned_ && !destroy_hwctx()) {
    // The firmware may still own the timed-out command: never free its buffers (spec §8.6).
    (void)command_.release();
    (void)instructions_.release();
  }
  command_.reset();
  instructions_.reset();
  destroy_hwctx();
  pdi_.reset();  // the PDI after the context that was configured with it
}

bool DirectContext::destroy_hwctx() noexcept {
  if (hwctx_ == 0) return true;
  uapi::DestroyHwctx destroy{hwctx_, 0};
  const bool destroyed = device_.ioctl_status(uapi::kIoctlDestroyHwctx, &destroy) == 0;
  uapi::SyncobjDestroy syncobj{syncobj_, 0};  // the context's syncobj stays ours to destroy
  device_.ioctl_status(uapi::kIoctlSyncobjDestroy, &syncobj);
  hwctx_ = 0;
  syncobj_ = 0;
  return destroyed;
}

}  // namespace taconite::npu

#include "npu/direct/driver_error.hpp"

#include <cerrno>
#include <cstring>

#include "npu/context_cache.hpp"

namespace taconite::npu {

namespace {

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// What to check, per call and errno (npu-direct.md §12).
std::string_view hint_for(std::string_view call, int error) {
  if (starts_with(call, "open")) {
    if (error == ENOENT) return "no NPU device node; is the amdxdna driver loaded (lsmod | grep amdxdna)?";
    if (error == EACCES || error == EPERM)
      return "no permission on the device node; add the user to its group (ls -l /dev/accel) or fix the udev rule";
    return "IOMMU SVA/PASID unavailable or the NPU is resetting; check dmesg for amdxdna and the NPU firmware";
  }
  if (error == ENODEV) return "NPU device gone, resetting or out of free columns; check dmesg for amdxdna";
  if (starts_with(call, "CREATE_HWCTX")) {
    if (error == EINVAL)
      return "NPU context refused (16-context cap shared by all processes, bad partition, or misaligned heap); "
             "check other NPU users and dmesg";
    if (error == ENOENT) return "device heap missing, or the driver's context limit reached";
    if (error == EFAULT) return "internal: QoS pointer";
  }
  if (starts_with(call, "CREATE_BO")) {
    if (error == ENOSPC) return "NPU device heap (64 MiB) exhausted";
    if (error == ENOMEM || error == EPERM) return "out of memory or memlock limit too low (ulimit -l)";
    if (error == EAGAIN) return "map the device heap first";
    if (error == EBUSY || error == EOPNOTSUPP) return "device heap already exists";
    return "invalid buffer request";
  }
  if (starts_with(call, "mmap")) return "mapping refused; check the memlock limit (ulimit -l) and free memory";
  if (starts_with(call, "CONFIG_HWCTX")) return "failed to load the PDI into the context (xclbin built for another NPU?)";
  if (starts_with(call, "EXEC_CMD")) {
    if (error == ENOENT) return "stale buffer handle";
    if (error == ETIME) return "argument buffer memory unavailable";
    return "bad submission";
  }
  if (starts_with(call, "SYNCOBJ_TIMELINE_WAIT") && error == ETIME)
    return "the NPU did not finish the run in time (firmware hang?); check dmesg";
  if (starts_with(call, "GET_INFO") || starts_with(call, "GET_ARRAY")) return "query unsupported by this driver";
  return "check dmesg for amdxdna messages";
}

}  // namespace

std::string driver_error_message(std::string_view call, int error, std::string_view detail) {
  const char* name = strerrorname_np(error);
  std::string message = "npu-direct: " + std::string(call) + " failed: " + (name ? name : std::to_string(error)) +
                        " (" + std::strerror(error) + ")";
  if (!detail.empty()) message += ", " + std::string(detail);
  message += "; " + std::string(hint_for(call, error));
  return message;
}

void fail_driver_call(std::string_view call, int error, std::string_view detail) {
  throw Failure(ErrorKind::Device, driver_error_message(call, error, detail));
}

void refuse_context(std::string_view call, int error, std::string_view detail) {
  throw ContextRefused(ErrorKind::Device, driver_error_message(call, error, detail));
}

}  // namespace taconite::npu

#include "npu/direct/amdxdna_device.hpp"

#include <fcntl.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdio>
#include <cstdint>

#include "common/failure.hpp"
#include "npu/direct/driver_error.hpp"

namespace taconite::npu {

namespace {

// A signal may interrupt a blocking ioctl again and again; give up eventually rather than spin.
constexpr int kMaxEintrRetries = 64;

std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

const char* bo_type_name(uapi::BoType type) {
  switch (type) {
    case uapi::kBoShare: return "SHARE";
    case uapi::kBoDevHeap: return "DEV_HEAP";
    case uapi::kBoDev: return "DEV";
    case uapi::kBoCmd: return "CMD";
    default: return "INVALID";
  }
}

}  // namespace

AmdxdnaDevice::AmdxdnaDevice(std::shared_ptr<DriverSeam> seam, const std::string& path)
    : seam_(std::move(seam)), path_(path) {
  fd_ = seam_->open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) fail_driver_call("open(" + path + ")", errno);
  try {
    // The heap first: DEV BOs and contexts need it mapped (spec §6).
    heap_handle_ = create_bo(uapi::kBoDevHeap, uapi::kHeapSize);
    const uapi::GetBoInfo info = bo_info(heap_handle_);
    heap_xdna_addr_ = info.xdna_addr;
    map_heap_aligned(info.map_offset);

    uapi::GetInfo query{uapi::kQueryAieMetadata, sizeof metadata_, reinterpret_cast<std::uintptr_t>(&metadata_)};
    ioctl("GET_INFO(QUERY_AIE_METADATA)", uapi::kIoctlGetInfo, &query);
    if (metadata_.cols == 0 || metadata_.core.row_count == 0)
      fail(ErrorKind::Device, "npu-direct: GET_INFO(QUERY_AIE_METADATA) reported " + std::to_string(metadata_.cols) +
                                  " columns and " + std::to_string(metadata_.core.row_count) + " core rows");
    uapi::FirmwareVersion firmware{};
    uapi::GetInfo fw_query{uapi::kQueryFirmwareVersion, sizeof firmware, reinterpret_cast<std::uintptr_t>(&firmware)};
    if (ioctl_status(uapi::kIoctlGetInfo, &fw_query) == 0) firmware_ = firmware;  // informational only
  } catch (...) {
    release();
    throw;
  }
}

AmdxdnaDevice::~AmdxdnaDevice() { release(); }

void AmdxdnaDevice::release() noexcept {
  if (heap_ != nullptr) seam_->munmap(heap_, uapi::kHeapSize);
  heap_ = nullptr;
  if (heap_handle_ != 0) close_bo(heap_handle_);
  heap_handle_ = 0;
  if (fd_ >= 0) seam_->close(fd_);
  fd_ = -1;
}

void AmdxdnaDevice::map_heap_aligned(std::uint64_t map_offset) {
  // Reserve twice the size, then map the heap MAP_FIXED at the 64 MiB boundary inside it and give
  // back the unused head and tail (spec §6: an unaligned heap makes CREATE_HWCTX fail).
  const std::size_t reserve = 2 * uapi::kHeapAlignment;
  void* reserved = seam_->mmap(nullptr, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) fail_driver_call("mmap(reserve 128 MiB for the device heap)", errno);
  const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(reserved);
  const std::uintptr_t aligned = (base + uapi::kHeapAlignment - 1) & ~(uapi::kHeapAlignment - 1);
  void* heap = seam_->mmap(reinterpret_cast<void*>(aligned), uapi::kHeapSize, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_FIXED, fd_, static_cast<off_t>(map_offset));
  if (heap == MAP_FAILED) {
    const int error = errno;
    seam_->munmap(reserved, reserve);
    fail_driver_call("mmap(device heap, 64 MiB at a 64 MiB-aligned address)", error);
  }
  if (aligned > base) seam_->munmap(reserved, aligned - base);
  const std::uintptr_t end = aligned + uapi::kHeapSize;
  if (base + reserve > end) seam_->munmap(reinterpret_cast<void*>(end), base + reserve - end);
  heap_ = static_cast<std::byte*>(heap);
}

int AmdxdnaDevice::ioctl_status(unsigned long request, void* arg) {
  for (int attempt = 0;; ++attempt) {
    if (seam_->ioctl(fd_, request, arg) == 0) return 0;
    const int error = errno;
    if (error != EINTR || attempt == kMaxEintrRetries) return error;  // only a signal is worth a retry
  }
}

void AmdxdnaDevice::ioctl(std::string_view name, unsigned long request, void* arg) {
  if (const int error = ioctl_status(request, arg); error != 0) fail_driver_call(name, error);
}

std::uint32_t AmdxdnaDevice::create_bo(uapi::BoType type, std::size_t size) {
  uapi::CreateBo request{};
  request.size = size;
  request.type = type;
  if (const int error = ioctl_status(uapi::kIoctlCreateBo, &request); error != 0)
    fail_driver_call(std::string("CREATE_BO(") + bo_type_name(type) + ")", error, "size " + std::to_string(size));
  return request.handle;
}

uapi::GetBoInfo AmdxdnaDevice::bo_info(std::uint32_t handle) {
  uapi::GetBoInfo info{};
  info.handle = handle;
  ioctl("GET_BO_INFO", uapi::kIoctlGetBoInfo, &info);
  return info;
}

void AmdxdnaDevice::close_bo(std::uint32_t handle) noexcept {
  uapi::GemClose request{handle, 0};
  ioctl_status(uapi::kIoctlGemClose, &request);  // teardown: nothing useful to do on failure
}

void* AmdxdnaDevice::map_bo(std::uint32_t handle, std::size_t size) {
  const uapi::GetBoInfo info = bo_info(handle);
  void* address = seam_->mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(info.map_offset));
  if (address == MAP_FAILED) fail_driver_call("mmap(BO)", errno, "size " + std::to_string(size));
  return address;
}

void AmdxdnaDevice::unmap(void* address, std::size_t size) noexcept { seam_->munmap(address, size); }

std::byte* AmdxdnaDevice::heap_host(std::uint64_t xdna_addr, std::size_t size) const {
  // The whole BO, not just its start, must lie in the mapped heap: it is written through this pointer.
  if (xdna_addr < heap_xdna_addr_ || size > uapi::kHeapSize || xdna_addr - heap_xdna_addr_ > uapi::kHeapSize - size)
    fail(ErrorKind::Device, "npu-direct: DEV BO at device address " + hex(xdna_addr) + " (" + std::to_string(size) +
                                " bytes) is outside the device heap at " + hex(heap_xdna_addr_));
  return heap_ + (xdna_addr - heap_xdna_addr_);
}

DeviceBo::DeviceBo(AmdxdnaDevice& device, uapi::BoType type, std::size_t size)
    : device_(device), type_(type), size_(size) {
  handle_ = device.create_bo(type, size);
  try {
    if (type == uapi::kBoDev) {
      device_address_ = device.bo_info(handle_).xdna_addr;
      host_ = device.heap_host(device_address_, size_);
    } else {
      host_ = static_cast<std::byte*>(device.map_bo(handle_, size));
      mapped_ = true;
      // SHARE BOs: the driver's device address once mapped, else (PASID mode) the host VA (spec §7.2).
      const std::uint64_t xdna = device.bo_info(handle_).xdna_addr;
      device_address_ = xdna != uapi::kInvalidAddr ? xdna : reinterpret_cast<std::uintptr_t>(host_);
    }
  } catch (...) {
    if (mapped_) device.unmap(host_, size_);
    device.close_bo(handle_);
    throw;
  }
}

DeviceBo::~DeviceBo() {
  if (mapped_) device_.unmap(host_, size_);
  device_.close_bo(handle_);
}

}  // namespace taconite::npu

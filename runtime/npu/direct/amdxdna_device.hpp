// One open amdxdna device (npu-direct.md §1 steps 1-5, §6): the fd, the 64 MiB device heap mapped
// at a 64 MiB-aligned host address before anything else, and the AIE/firmware metadata. Every
// driver call goes through the DriverSeam; failures throw Failure(Device) naming call and errno.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "npu/direct/driver_seam.hpp"
#include "npu/direct/uapi.hpp"

namespace taconite::npu {

class AmdxdnaDevice {
 public:
  AmdxdnaDevice(std::shared_ptr<DriverSeam> seam, const std::string& path);
  AmdxdnaDevice(const AmdxdnaDevice&) = delete;
  AmdxdnaDevice& operator=(const AmdxdnaDevice&) = delete;
  ~AmdxdnaDevice();  // unmaps and closes the heap, then the fd (every BO/context must be gone)

  // The ioctl, retried on EINTR (a signal while blocked; spec §12). Returns 0 or the errno.
  int ioctl_status(unsigned long request, void* arg);
  // The same, throwing Failure(Device) "<name> failed: ..." on error.
  void ioctl(std::string_view name, unsigned long request, void* arg);

  std::uint32_t create_bo(uapi::BoType type, std::size_t size);
  uapi::GetBoInfo bo_info(std::uint32_t handle);
  void close_bo(std::uint32_t handle) noexcept;
  void* map_bo(std::uint32_t handle, std::size_t size);  // MAP_SHARED at the BO's map_offset
  void unmap(void* address, std::size_t size) noexcept;

  // Host address of a device-heap (DEV BO) device address.
  std::byte* heap_host(std::uint64_t xdna_addr, std::size_t size) const;

  const uapi::AieMetadata& aie_metadata() const { return metadata_; }
  const std::optional<uapi::FirmwareVersion>& firmware_version() const { return firmware_; }
  const std::string& path() const { return path_; }
  DriverSeam& seam() { return *seam_; }

 private:
  void map_heap_aligned(std::uint64_t map_offset);
  void release() noexcept;

  std::shared_ptr<DriverSeam> seam_;
  std::string path_;
  int fd_ = -1;
  std::uint32_t heap_handle_ = 0;
  std::byte* heap_ = nullptr;
  std::uint64_t heap_xdna_addr_ = 0;
  uapi::AieMetadata metadata_{};
  std::optional<uapi::FirmwareVersion> firmware_;
};

// A buffer object of the device, released (unmapped, then GEM_CLOSE) at destruction.
// DEV BOs live in the heap (host view through it); SHARE and CMD BOs get their own mapping.
class DeviceBo {
 public:
  DeviceBo(AmdxdnaDevice& device, uapi::BoType type, std::size_t size);
  DeviceBo(const DeviceBo&) = delete;
  DeviceBo& operator=(const DeviceBo&) = delete;
  ~DeviceBo();

  std::uint32_t handle() const { return handle_; }
  std::size_t size() const { return size_; }
  std::byte* host() const { return host_; }
  std::uint64_t device_address() const { return device_address_; }  // what goes into a packet

 private:
  AmdxdnaDevice& device_;
  uapi::BoType type_;
  std::size_t size_;
  std::uint32_t handle_ = 0;
  std::byte* host_ = nullptr;
  bool mapped_ = false;
  std::uint64_t device_address_ = 0;
};

}  // namespace taconite::npu

// The driver calls the npu-direct backend makes on the amdxdna device (open / ioctl / mmap /
// munmap / close, libc conventions: -1 or MAP_FAILED with errno set). LoadOptions::npu_driver
// substitutes them, so tests run npu-direct against a simulated device; a model keeps the driver it
// was loaded with until its last session is gone. Implementations must be safe to call from the
// thread of whichever session runs (the model serializes the calls).
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace taconite {

class NpuDriver {
 public:
  virtual ~NpuDriver() = default;
  virtual int open(const char* path, int flags) = 0;
  virtual int ioctl(int fd, unsigned long request, void* arg) = 0;
  virtual void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) = 0;
  virtual int munmap(void* addr, std::size_t length) = 0;
  virtual int close(int fd) = 0;
};

}  // namespace taconite

// The one thin seam every amdxdna driver call goes through (open/ioctl/mmap/munmap/close), so
// tests can substitute a simulated device (tests/sim). Calls follow libc conventions: -1 or
// MAP_FAILED with errno set.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <memory>

namespace taconite::npu {

class DriverSeam {
 public:
  virtual ~DriverSeam() = default;
  virtual int open(const char* path, int flags) = 0;
  virtual int ioctl(int fd, unsigned long request, void* arg) = 0;
  virtual void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) = 0;
  virtual int munmap(void* addr, std::size_t length) = 0;
  virtual int close(int fd) = 0;
};

// The real driver (plain libc calls).
std::shared_ptr<DriverSeam> make_libc_driver_seam();

// What the npu-direct backend opens the device through. Tests install a simulator here; an empty
// function restores the libc seam. Not thread-safe: set it before loading an embedder.
using DriverSeamFactory = std::function<std::shared_ptr<DriverSeam>()>;
void set_driver_seam_factory(DriverSeamFactory factory);
std::shared_ptr<DriverSeam> make_driver_seam();

}  // namespace taconite::npu

#include "npu/direct/driver_seam.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/failure.hpp"

namespace taconite::npu {

namespace {

class LibcDriverSeam final : public DriverSeam {
 public:
  int open(const char* path, int flags) override { return ::open(path, flags); }
  int ioctl(int fd, unsigned long request, void* arg) override { return ::ioctl(fd, request, arg); }
  void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) override {
    return ::mmap(addr, length, prot, flags, fd, offset);
  }
  int munmap(void* addr, std::size_t length) override { return ::munmap(addr, length); }
  int close(int fd) override { return ::close(fd); }
};

}  // namespace

std::shared_ptr<DriverSeam> make_libc_driver_seam() { return std::make_shared<LibcDriverSeam>(); }

std::shared_ptr<DriverSeam> make_driver_seam(const NpuDriverFactory& factory) {
  if (!factory) return make_libc_driver_seam();
  std::shared_ptr<DriverSeam> driver = factory();
  if (!driver) fail(ErrorKind::Input, "LoadOptions::npu_driver returned no driver");
  return driver;
}

}  // namespace taconite::npu

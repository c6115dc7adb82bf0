#include "npu/direct/driver_seam.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

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

DriverSeamFactory& installed_factory() {
  static DriverSeamFactory factory;
  return factory;
}

}  // namespace

std::shared_ptr<DriverSeam> make_libc_driver_seam() { return std::make_shared<LibcDriverSeam>(); }

void set_driver_seam_factory(DriverSeamFactory factory) { installed_factory() = std::move(factory); }

std::shared_ptr<DriverSeam> make_driver_seam() {
  const DriverSeamFactory& factory = installed_factory();
  return factory ? factory() : make_libc_driver_seam();
}

}  // namespace taconite::npu

#include "bounded_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace taconite::vision {

namespace {

std::string type_problem(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory, not a regular file";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  return "is not a regular file";
}

struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_bounded_file(const std::string& path, std::uintmax_t max_bytes, std::vector<unsigned char>& bytes) {
  // O_NONBLOCK: opening a FIFO without a writer would otherwise wait for one forever.
  const Descriptor file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) return std::strerror(errno);
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) return std::strerror(errno);
  if (!S_ISREG(info.st_mode)) return type_problem(info.st_mode);
  const auto size = static_cast<std::uintmax_t>(info.st_size);
  if (size > max_bytes)
    return "is " + std::to_string(size) + " bytes, more than the limit of " + std::to_string(max_bytes);
  bytes.assign(static_cast<std::size_t>(size), 0);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(file.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::strerror(errno);
    if (n == 0) return "was truncated while being read";
    done += static_cast<std::size_t>(n);
  }
  return {};
}

}  // namespace taconite::vision

#include "input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace taconite::gst {

namespace {

std::string not_regular(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory, not a regular file";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
  return "is not a regular file";
}

// The regular file opened read-only, or -1 with `problem` set. O_NONBLOCK: opening a FIFO
// returns at once (and is then refused) instead of waiting for a writer.
int open_regular(const std::string& path, struct stat* st, std::string* problem) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *problem = std::strerror(errno);
    return -1;
  }
  if (::fstat(fd, st) != 0) {
    *problem = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st->st_mode)) {
    *problem = not_regular(st->st_mode);
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::string regular_file_problem(const std::string& path) {
  struct stat st {};
  std::string problem;
  const int fd = open_regular(path, &st, &problem);
  if (fd >= 0) ::close(fd);
  return problem;
}

bool read_regular_file(const std::string& path, std::size_t max_bytes, std::string* contents, std::string* problem) {
  struct stat st {};
  const int fd = open_regular(path, &st, problem);
  if (fd < 0) return false;
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    *problem = "is " + std::to_string(st.st_size) + " bytes, more than " + std::to_string(max_bytes);
    ::close(fd);
    return false;
  }
  // One byte more than allowed, so a file that grew since fstat is still refused, not cut.
  contents->assign(max_bytes + 1, '\0');
  std::size_t done = 0;
  while (done < contents->size()) {
    const ssize_t got = ::read(fd, contents->data() + done, contents->size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      *problem = std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  ::close(fd);
  if (done > max_bytes) {
    *problem = "is more than " + std::to_string(max_bytes) + " bytes";
    return false;
  }
  contents->resize(done);
  return true;
}

}  // namespace taconite::gst

#include "bundle/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/failure.hpp"

namespace taconite::bundle {

std::string file_problem(const std::filesystem::path& path, int err) {
  switch (err) {
    case ENOENT: {
      struct stat link {};
      if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) return "is a dangling symlink (its target does not exist)";
      return "does not exist";
    }
    case EACCES:
    case EPERM: return "permission denied";
    case EISDIR: return "is a directory, not a regular file";
    case ENOTDIR: return "does not exist (a component of the path is not a directory)";
    case ELOOP: return "is a symlink loop";
    case ENAMETOOLONG: return "path too long";
    default: return std::strerror(err);
  }
}

std::string not_regular_problem(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory, not a regular file";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
  return "is not a regular file";
}

std::string regular_file_problem(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return file_problem(path, errno);
  return S_ISREG(st.st_mode) ? std::string() : not_regular_problem(st.st_mode);
}

RegularFile RegularFile::open(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO must not hang the loader (it is rejected below as not regular).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(ErrorKind::Io, path.string() + ": " + file_problem(path, errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    fail(ErrorKind::Io, path.string() + ": fstat failed: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(ErrorKind::Io, path.string() + ": " + not_regular_problem(st.st_mode));
  }
  return RegularFile(path, fd, static_cast<std::uint64_t>(st.st_size));
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RegularFile::read_all(void* out) const {
  auto* bytes = static_cast<char*>(out);
  std::uint64_t done = 0;
  while (done < size_) {
    const ssize_t got = ::pread(fd_, bytes + done, static_cast<std::size_t>(size_ - done), static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(ErrorKind::Io, path_.string() + ": read failed: " + std::strerror(errno));
    if (got == 0)
      fail(ErrorKind::Io, path_.string() + ": the file shrank while it was read (" + std::to_string(done) + " of " +
                              std::to_string(size_) + " bytes); was it modified during the load?");
    done += static_cast<std::uint64_t>(got);
  }
}

}  // namespace taconite::bundle

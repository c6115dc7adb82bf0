// Opening a bundle file that must be a regular file, with errors that say what is wrong
// (does not exist, permission denied, is a directory, ...) rather than a generic "missing".
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace taconite::bundle {

// Words for an errno of open()/stat() on `path`, e.g. "does not exist", "permission denied",
// "is a dangling symlink" (ENOENT on a symlink whose target is missing).
std::string file_problem(const std::filesystem::path& path, int err);

// Words for a file type that is not a regular file, e.g. "is a directory, not a regular file".
std::string not_regular_problem(mode_t mode);

// "" when `path` is a regular file (following symlinks), else what is wrong with it.
std::string regular_file_problem(const std::filesystem::path& path);

// A regular file opened read-only (RAII descriptor).
class RegularFile {
 public:
  // Throws Failure(Io) "<path>: <problem>". Never blocks on a FIFO.
  static RegularFile open(const std::filesystem::path& path);

  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&&) = delete;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  const std::filesystem::path& path() const { return path_; }
  int fd() const { return fd_; }
  std::uint64_t size() const { return size_; }  // at open

  // Reads bytes [0, size()) into `out` (which holds size() bytes). Throws Failure(Io) naming the
  // file when a read fails or the file became shorter since open.
  void read_all(void* out) const;

 private:
  RegularFile(std::filesystem::path path, int fd, std::uint64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}

  std::filesystem::path path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

}  // namespace taconite::bundle

#include "snapshot_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <regex>

namespace taconite::app {

namespace fs = std::filesystem;

namespace {

double file_time(const fs::path& path) {
  std::error_code ec;
  const auto t = fs::last_write_time(path, ec);
  if (ec) return 0;
  const auto sys = std::chrono::file_clock::to_sys(t);
  return std::chrono::duration<double>(sys.time_since_epoch()).count();
}

double wall_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

Error io_error(const fs::path& path, const std::string& what, int error) {
  return Error{ErrorKind::Io, path.string() + ": " + what + ": " + std::strerror(error)};
}

// Writes all of `bytes` to `fd`; errno's value on failure, else 0.
int write_all(int fd, const std::vector<unsigned char>& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : ENOSPC;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace

SnapshotFiles::SnapshotFiles(fs::path dir, SnapshotRetention retention) : dir_(std::move(dir)), retention_(retention) {}

void SnapshotFiles::add(double mtime, fs::path path, std::uint64_t size) {
  if (auto old = times_.find(path); old != times_.end()) {
    auto [first, last] = by_time_.equal_range(old->second);
    for (auto it = first; it != last; ++it)
      if (it->second.path == path) {
        bytes_ -= it->second.size;
        by_time_.erase(it);
        break;
      }
  }
  times_[path] = mtime;
  bytes_ += size;
  by_time_.emplace(mtime, Entry{std::move(path), size});
}

std::size_t SnapshotFiles::scan(std::size_t max_scanned, bool& truncated) {
  truncated = false;
  static const std::regex kDate(R"(\d{4}-\d{2}-\d{2})");
  std::error_code ec;
  std::size_t found = 0;
  // DIR/<camera>/<date>/*.jpg only: nothing else under DIR is ever taken for a snapshot.
  for (fs::directory_iterator camera(dir_, ec), end; !ec && camera != end; camera.increment(ec)) {
    if (!camera->is_directory(ec)) continue;
    for (fs::directory_iterator day(camera->path(), ec); !ec && day != end; day.increment(ec)) {
      if (!day->is_directory(ec) || !std::regex_match(day->path().filename().string(), kDate)) continue;
      for (fs::directory_iterator file(day->path(), ec); !ec && file != end; file.increment(ec)) {
        if (!file->is_regular_file(ec) || file->path().extension() != ".jpg") continue;
        if (found >= max_scanned) return truncated = true, found;
        add(file_time(file->path()), file->path(), file->file_size(ec));
        ++found;
      }
      ec.clear();
    }
    ec.clear();
  }
  return found;
}

Status SnapshotFiles::write(const fs::path& relative, const std::vector<unsigned char>& bytes) {
  const fs::path target = dir_ / relative;
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) return Error{ErrorKind::Io, target.parent_path().string() + ": cannot create the directory: " + ec.message()};
  static thread_local std::mt19937_64 random{std::random_device{}()};
  const fs::path temporary = target.parent_path() / (".tmp-" + std::to_string(random()) + ".jpg.part");
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return io_error(temporary, "cannot create the snapshot", errno);
  int error = write_all(fd, bytes);
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temporary.c_str(), target.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    return io_error(target, "cannot write the snapshot", error);
  }
  add(wall_now(), target, bytes.size());
  return Ok{};
}

std::size_t SnapshotFiles::enforce(double now_epoch_s, std::size_t max_deletes) {
  std::size_t deleted = 0;
  while (!by_time_.empty() && deleted < max_deletes) {
    const auto oldest = by_time_.begin();
    const bool over_count = retention_.max_files > 0 && by_time_.size() > retention_.max_files;
    const bool over_bytes = retention_.max_bytes > 0 && bytes_ > retention_.max_bytes && by_time_.size() > 1;
    const bool too_old = retention_.max_age_s > 0 && oldest->first < now_epoch_s - retention_.max_age_s;
    if (!over_count && !over_bytes && !too_old) break;
    std::error_code ec;
    fs::remove(oldest->second.path, ec);  // (gone already: forgotten all the same)
    const fs::path day = oldest->second.path.parent_path();
    bytes_ -= oldest->second.size;
    times_.erase(oldest->second.path);
    by_time_.erase(oldest);
    ++deleted;
    if (fs::is_empty(day, ec) && !ec) fs::remove(day, ec);  // an emptied date directory goes too
  }
  return deleted;
}

}  // namespace taconite::app

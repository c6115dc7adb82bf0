// Which file a path names: its device and inode. A gallery file replaced under its name
// (`mv new.db people.db`) is another file, a deleted one none; SQLite notices neither and goes on
// with the file it opened. The gallery watcher and the unknown-face writer compare what the path
// names now with what they opened.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cerrno>
#include <filesystem>
#include <optional>

namespace taconite::gallery {

struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

// The file `path` names now (following symlinks); none, with `error` set to stat's errno (ENOENT:
// gone), when it names nothing.
inline std::optional<FileIdentity> file_identity(const std::filesystem::path& path, int& error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error = errno;
    return std::nullopt;
  }
  return FileIdentity{st.st_dev, st.st_ino};
}

}  // namespace taconite::gallery

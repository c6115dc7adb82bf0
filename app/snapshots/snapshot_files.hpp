// The snapshot files under one directory: written atomically (a temporary file in the target
// directory, renamed into place) and kept within bounds of count, bytes and age, oldest deleted
// first. Only files this index knows are deleted: those it wrote and those found at start that
// match DIR/<camera>/<YYYY-MM-DD>/<name>.jpg. Not thread-safe: the writer thread owns it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "taconite/error.hpp"

namespace taconite::app {

struct SnapshotRetention {
  std::size_t max_files = 0;    // 0: no bound
  std::uint64_t max_bytes = 0;  // 0: no bound
  double max_age_s = 0;         // 0: no bound
};

class SnapshotFiles {
 public:
  SnapshotFiles(std::filesystem::path dir, SnapshotRetention retention);
  // Finds the snapshots already under DIR (at most `max_scanned`); returns how many, and whether
  // the scan stopped at the bound.
  std::size_t scan(std::size_t max_scanned, bool& truncated);
  // Writes `bytes` to DIR/relative atomically; Io error naming the file (errno's text) when it
  // cannot (the temporary file removed).
  Status write(const std::filesystem::path& relative, const std::vector<unsigned char>& bytes);
  // Deletes the oldest beyond the bounds, at most `max_deletes`; returns how many it deleted.
  std::size_t enforce(double now_epoch_s, std::size_t max_deletes);
  std::size_t files() const { return by_time_.size(); }
  std::uint64_t bytes() const { return bytes_; }

 private:
  struct Entry {
    std::filesystem::path path;
    std::uint64_t size = 0;
  };
  void add(double mtime_epoch_s, std::filesystem::path path, std::uint64_t size);
  const std::filesystem::path dir_;
  const SnapshotRetention retention_;
  std::multimap<double, Entry> by_time_;           // oldest first
  std::map<std::filesystem::path, double> times_;  // path -> its key in by_time_ (a rewrite replaces)
  std::uint64_t bytes_ = 0;
};

}  // namespace taconite::app

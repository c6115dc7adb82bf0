// A read-only memory mapping of a whole file (RAII), for tensors.bin. During the load the bytes
// are the file's pages (zero copy); the load ends by detaching them from the file: either a
// private in-memory copy at the same address, or no bytes at all. A running engine therefore
// never touches the file (truncating it cannot raise SIGBUS, overwriting it cannot change results).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

#include "bundle/regular_file.hpp"

namespace taconite::bundle {

class MappedFile {
 public:
  MappedFile() = default;
  // Throws Failure(Io) naming the file and what is wrong when it cannot be opened or mapped.
  // The file stays open until detached.
  static MappedFile open_read_only(const std::filesystem::path& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  std::size_t size() const { return size_; }

  // Replaces the mapping, at the same address (views stay valid), by a private anonymous copy
  // read from the open file, and closes the file. Throws Failure(Io) when the file cannot be
  // read (e.g. it shrank since it was mapped) or the copy cannot be allocated.
  void copy_into_memory();
  // Unmaps the bytes and closes the file: every view into them becomes invalid.
  void release() noexcept;

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::unique_ptr<RegularFile> file_;  // open while the bytes are the file's pages
};

}  // namespace taconite::bundle

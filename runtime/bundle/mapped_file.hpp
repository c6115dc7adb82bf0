// A read-only memory mapping of a whole file (RAII). Used for tensors.bin: never copied to the heap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

namespace taconite::bundle {

class MappedFile {
 public:
  MappedFile() = default;
  // Throws Failure(Io) naming the file and errno when it cannot be opened or mapped.
  static MappedFile open_read_only(const std::filesystem::path& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  std::size_t size() const { return size_; }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace taconite::bundle

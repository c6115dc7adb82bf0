#include "bundle/mapped_file.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "common/failure.hpp"

namespace taconite::bundle {

MappedFile MappedFile::open_read_only(const std::filesystem::path& path) {
  auto file = std::make_unique<RegularFile>(RegularFile::open(path));
  MappedFile mapped;
  mapped.size_ = static_cast<std::size_t>(file->size());
  if (mapped.size_ > 0) {
    void* addr = ::mmap(nullptr, mapped.size_, PROT_READ, MAP_PRIVATE, file->fd(), 0);
    if (addr == MAP_FAILED) fail(ErrorKind::Io, path.string() + ": mmap failed: " + std::strerror(errno));
    mapped.data_ = static_cast<const std::uint8_t*>(addr);
  }
  mapped.file_ = std::move(file);
  return mapped;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)), file_(std::move(other.file_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    file_ = std::move(other.file_);
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

void MappedFile::copy_into_memory() {
  if (!file_) return;  // already detached
  if (data_ != nullptr) {
    void* copy = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copy == MAP_FAILED)
      fail(ErrorKind::Io, "cannot allocate " + std::to_string(size_) + " bytes for the in-memory copy of " +
                              std::string(file_->path().filename()) + ": " + std::strerror(errno));
    try {
      file_->read_all(copy);
    } catch (...) {
      ::munmap(copy, size_);
      throw;
    }
    ::mprotect(copy, size_, PROT_READ);  // best effort: the copy is only ever read
    // Atomically replaces the file mapping at data_: every view into the bytes stays valid.
    if (::mremap(copy, size_, size_, MREMAP_MAYMOVE | MREMAP_FIXED, const_cast<std::uint8_t*>(data_)) == MAP_FAILED) {
      const int err = errno;
      ::munmap(copy, size_);
      fail(ErrorKind::Io, std::string(file_->path().filename()) + ": mremap of the in-memory copy failed: " +
                              std::strerror(err));
    }
  }
  file_.reset();
}

void MappedFile::release() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<std::uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
  file_.reset();
}

}  // namespace taconite::bundle

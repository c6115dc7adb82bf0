#include "hnsw_file.hpp"

#include <faiss/Index.h>
#include <faiss/impl/io.h>
#include <faiss/index_io.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>
#include <vector>

namespace taconite::gallery {

namespace {

constexpr std::size_t kHeaderBytes = 1024;  // fixed: the FAISS bytes start right after it
constexpr const char* kFormat = "taconite-gallery-hnsw 2";

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

std::string hex(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

std::string header_text(const HnswBuildState& s, std::uint64_t index_bytes, std::uint64_t index_hash) {
  std::ostringstream out;
  out << kFormat << "\nrevision " << s.revision << "\ntemplates " << s.templates << "\ndim " << s.dim << "\nm " << s.m
      << "\nef_construction " << s.ef_construction << "\nmodel_fingerprint " << s.model_fingerprint << "\ncontent "
      << hex(s.content) << "\nindex_bytes " << index_bytes << "\nindex_hash " << hex(index_hash) << "\n";
  return out.str();
}

// FAISS's writer into our file, hashing what it writes.
struct HashingWriter : faiss::IOWriter {
  std::FILE* file = nullptr;
  ContentHash hash;
  std::uint64_t bytes = 0;
  std::size_t operator()(const void* ptr, std::size_t size, std::size_t items) override {
    const std::size_t written = std::fwrite(ptr, size, items, file);
    hash.add(ptr, size * written);
    bytes += size * written;
    return written;
  }
};

}  // namespace

void ContentHash::mix(std::uint64_t word) {
  state_ = std::rotl(state_ ^ (word * 0x87c37b91114253d5ull), 31) * 0x4cf5ad432745937full + 0x52dce729ull;
}

void ContentHash::add(const void* bytes, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  length_ += size;
  for (; size > 0 && pending_bytes_ > 0; ++p, --size) {
    pending_ |= std::uint64_t{*p} << (8 * pending_bytes_);
    if (++pending_bytes_ == 8) {
      mix(pending_);
      pending_ = 0;
      pending_bytes_ = 0;
    }
  }
  for (; size >= 8; p += 8, size -= 8) {
    std::uint64_t word;  // little-endian machines: the same value the byte loops assemble
    std::memcpy(&word, p, 8);
    mix(word);
  }
  for (; size > 0; ++p, --size) pending_ |= std::uint64_t{*p} << (8 * pending_bytes_++);
}

std::uint64_t ContentHash::value() const {
  ContentHash last = *this;
  if (last.pending_bytes_ > 0) last.mix(last.pending_ | 0x80ull << (8 * last.pending_bytes_ % 64));
  std::uint64_t h = last.state_ ^ length_;
  h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
  return h ^ (h >> 29);
}

Result<std::unique_ptr<faiss::Index>> read_hnsw_file(const std::filesystem::path& file,
                                                     const HnswBuildState& wanted) {
  const auto unusable = [](std::string why) { return Error{ErrorKind::Io, std::move(why)}; };
  try {
    // Not blocking: a FIFO put where the index belongs must not hang the gallery's load.
    const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      if (fd >= 0) ::close(fd);
      return unusable("none saved");
    }
    File in(::fdopen(fd, "rb"));
    if (!in) {
      ::close(fd);
      return unusable("none saved");
    }
    std::vector<char> header(kHeaderBytes);
    if (std::fread(header.data(), 1, kHeaderBytes, in.get()) != kHeaderBytes)
      return unusable("damaged: shorter than its header");
    // The header ends at its first NUL (the padding); it must be exactly the one for `wanted`.
    const std::string text(header.data(), strnlen(header.data(), kHeaderBytes));
    const std::string prefix = header_text(wanted, 0, 0);
    const std::size_t sizes = prefix.find("index_bytes ");
    if (text.compare(0, sizes, prefix, 0, sizes) != 0)
      return unusable(text.starts_with(kFormat) ? "built for another gallery state"
                                                : "not an index file of this version");
    unsigned long long bytes = 0, hash = 0;
    if (std::sscanf(text.c_str() + sizes, "index_bytes %llu\nindex_hash %16llx\n", &bytes, &hash) != 2)
      return unusable("damaged: unreadable header");
    // Hash the FAISS bytes before FAISS parses them: damaged sizes inside could make it allocate anything.
    ContentHash content;
    std::vector<char> chunk(1 << 20);
    std::uint64_t total = 0;
    for (std::size_t n; (n = std::fread(chunk.data(), 1, chunk.size(), in.get())) > 0; total += n)
      content.add(chunk.data(), n);
    if (total != bytes || content.value() != hash)
      return unusable("damaged: its checksum does not match (" + std::to_string(total) + " of " +
                      std::to_string(bytes) + " index bytes)");
    if (std::fseek(in.get(), static_cast<long>(kHeaderBytes), SEEK_SET) != 0) return unusable("unreadable");
    return std::unique_ptr<faiss::Index>(faiss::read_index(in.get()));
  } catch (const std::exception& e) {
    return unusable(std::string("unreadable: ") + e.what());
  }
}

Status write_hnsw_file(const std::filesystem::path& file, const faiss::Index& index, const HnswBuildState& state,
                       std::filesystem::perms mode) {
  std::string tmp = file.string() + ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return Error{ErrorKind::Io, tmp + ": cannot create: " + std::strerror(errno)};
  ::fchmod(fd, static_cast<mode_t>(mode & std::filesystem::perms::all));  // mkstemp made it 0600
  File out(::fdopen(fd, "w+b"));
  if (!out) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    return Error{ErrorKind::Io, tmp + ": cannot open: " + reason};
  }
  std::string problem;
  try {
    const std::vector<char> placeholder(kHeaderBytes, '\0');
    HashingWriter writer;
    writer.file = out.get();
    if (std::fwrite(placeholder.data(), 1, kHeaderBytes, out.get()) != kHeaderBytes)
      throw std::runtime_error("write failed");
    faiss::write_index(&index, &writer);
    std::string header = header_text(state, writer.bytes, writer.hash.value());
    if (header.size() >= kHeaderBytes) throw std::runtime_error("header too long (model fingerprint?)");
    header.resize(kHeaderBytes, '\0');
    // The header last, then to disk: a crash before the rename leaves only a temporary file.
    if (std::fseek(out.get(), 0, SEEK_SET) != 0 ||
        std::fwrite(header.data(), 1, kHeaderBytes, out.get()) != kHeaderBytes || std::fflush(out.get()) != 0 ||
        ::fsync(fd) != 0)
      throw std::runtime_error(std::string("write failed: ") + std::strerror(errno));
  } catch (const std::exception& e) {
    problem = e.what();
  }
  out.reset();
  std::error_code ec;
  if (problem.empty()) std::filesystem::rename(tmp, file, ec);
  if (problem.empty() && ec) problem = ec.message();
  if (!problem.empty()) {
    std::filesystem::remove(tmp, ec);
    return Error{ErrorKind::Io, file.string() + ": cannot save the index: " + problem};
  }
  return Ok{};
}

}  // namespace taconite::gallery

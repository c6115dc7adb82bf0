// The persisted HNSW index of a gallery: ONE file, <gallery>.hnsw, so the index and the record of
// what it was built from are replaced together. It holds a fixed-size text header (format, the
// gallery revision, template count, dimension, HNSW parameters, model fingerprint, a hash of the
// gallery's template ids and vectors, and the size and hash of the FAISS bytes), then FAISS's
// serialised index. A file is used only when its header matches the gallery being loaded and the
// FAISS bytes hash to the recorded value, so a stale, foreign, truncated or overwritten file is
// never parsed by FAISS; it is rebuilt instead. Writes go to a unique temporary file in the same
// directory (mkstemp), are synced, then renamed over the old file: readers see the old or the new
// file whole, and two writers (two elements, two processes) never share a temporary file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "gallery_store.hpp"

namespace faiss {
struct Index;
}

namespace taconite::gallery {

// What an HNSW index was built from; a different one means the file is stale.
struct HnswBuildState {
  std::int64_t revision = -1;
  std::size_t templates = 0;
  int dim = 0, m = 0, ef_construction = 0;
  std::string model_fingerprint;
  std::uint64_t content = 0;  // ContentHash of the templates (ids and vectors, in index order)

  bool operator==(const HnswBuildState&) const = default;
};

// A 64-bit hash of byte runs (not cryptographic: it detects changed or damaged data).
class ContentHash {
 public:
  void add(const void* bytes, std::size_t size);
  std::uint64_t value() const;

 private:
  void mix(std::uint64_t word);
  std::uint64_t state_ = 0x9e3779b97f4a7c15ull, length_ = 0;
  std::uint64_t pending_ = 0;  // bytes of an incomplete word (so any split of a run hashes alike)
  unsigned pending_bytes_ = 0;
};

// The index saved for `wanted`; an Io error saying why ("none saved", "built for another gallery
// state", "damaged: ...") when there is none to use. Never throws.
Result<std::unique_ptr<faiss::Index>> read_hnsw_file(const std::filesystem::path& file,
                                                     const HnswBuildState& wanted);

// Saves `index` built from `state` as `file` (atomically, see above), readable as `mode` (the
// gallery's: the index holds its templates). Never throws.
Status write_hnsw_file(const std::filesystem::path& file, const faiss::Index& index, const HnswBuildState& state,
                       std::filesystem::perms mode);

}  // namespace taconite::gallery

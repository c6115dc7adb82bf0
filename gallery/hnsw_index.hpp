// The approximate search of GalleryIndex: an HNSW graph over the templates, built, or read from the
// gallery's <gallery>.hnsw (hnsw_file.hpp) when it was built from exactly these templates. With
// FAISS it is hnsw_index.cpp (FAISS's graph on simd_flat_ip.hpp's distances); in a build without
// FAISS (-Dfaiss=disabled), hnsw_unavailable.cpp: hnsw_available() is false, and GalleryIndex
// searches exactly whatever the gallery's size. Nothing outside these files includes FAISS.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gallery_index.hpp"

namespace taconite::gallery {

// What an HNSW graph is built from: the gallery's templates in index order (row i: template_ids[i]
// of identity template_identity[i], vectors[i * dim ...]), kept alive by the caller during a call.
struct HnswSource {
  std::int64_t revision = 0;
  std::string model_fingerprint;
  int dim = 0;
  std::span<const std::int64_t> template_ids, template_identity;
  std::span<const float> vectors;
};

class HnswIndex {
 public:
  virtual ~HnswIndex() = default;
  // The `count` best rows by the graph for a unit query, best first, as (similarity, row); fewer
  // when the graph yields fewer. Searched with a beam of at least `count`. May throw (bad_alloc).
  virtual std::vector<std::pair<float, std::int64_t>> top(std::span<const float> unit, std::size_t count) const = 0;
  virtual void set_ef_search(int ef_search) = 0;  // not while top() runs
  // Saves the graph as `gallery`'s HNSW file, tied to `source` (what it was built from), readable as `mode`.
  virtual Status save(const std::filesystem::path& gallery, const HnswSource& source,
                      std::filesystem::perms mode) const = 0;
};

// The read_hnsw error when the file holds an index of the right state but not an HNSW graph of ours.
inline constexpr const char* kHnswNotOurs = "is not an HNSW index of this gallery";

bool hnsw_available();

// Where a gallery's HNSW graph is saved: next to it, <gallery>.hnsw.
inline std::filesystem::path hnsw_file_path(const std::filesystem::path& gallery) { return gallery.string() + ".hnsw"; }

// The graph of `source` with options' m, ef_construction and ef_search; Io error
// kIndexBuildCancelled when options.cancel became true.
Result<std::unique_ptr<HnswIndex>> build_hnsw(const HnswSource& source, const IndexOptions& options);
// `gallery`'s saved graph when it was built from `source` with these options; else an Io error
// saying why: "none saved", "built for another gallery state", "damaged: ...", "unreadable...",
// kHnswNotOurs. Throws only bad_alloc.
Result<std::unique_ptr<HnswIndex>> read_hnsw(const std::filesystem::path& gallery, const HnswSource& source,
                                             const IndexOptions& options);

}  // namespace taconite::gallery

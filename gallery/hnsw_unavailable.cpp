// The HNSW search of a build without FAISS: none, so GalleryIndex searches exactly (hnsw_index.hpp).
#include "hnsw_index.hpp"

namespace taconite::gallery {

namespace {

Error unavailable() { return Error{ErrorKind::Input, "this taconite was built without FAISS: no HNSW index"}; }

}  // namespace

bool hnsw_available() { return false; }

Result<std::unique_ptr<HnswIndex>> build_hnsw(const HnswSource&, const IndexOptions&) { return unavailable(); }

Result<std::unique_ptr<HnswIndex>> read_hnsw(const std::filesystem::path&, const HnswSource&, const IndexOptions&) {
  return unavailable();
}

}  // namespace taconite::gallery

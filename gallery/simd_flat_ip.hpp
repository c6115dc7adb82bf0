// A FAISS IndexFlatIP whose distance computer uses our run-time-dispatched dot product
// (simd_dot.hpp): the HNSW graph is built and searched through its storage index's distance
// computer, which in Debian's generic FAISS build is a scalar loop. Same data layout and file
// format as IndexFlatIP (write_index stores it as one; adopt() turns a read one back).
#pragma once

#include <faiss/IndexFlat.h>

#include <memory>

namespace taconite::gallery {

struct SimdFlatIP : faiss::IndexFlatIP {
  explicit SimdFlatIP(idx_t dim) : faiss::IndexFlatIP(dim) {}

  faiss::FlatCodesDistanceComputer* get_FlatCodesDistanceComputer() const override;

  // Takes over the vectors of a flat inner-product index (e.g. the storage of a read HNSW index).
  static std::unique_ptr<SimdFlatIP> adopt(faiss::IndexFlatIP&& flat);
};

}  // namespace taconite::gallery

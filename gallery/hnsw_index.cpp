// HNSW search with FAISS (hnsw_index.hpp): an IndexHNSWFlat whose flat storage is a SimdFlatIP, built
// in batches that look at IndexOptions::cancel, persisted through hnsw_file.hpp.
#include "hnsw_index.hpp"

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/DistanceComputer.h>
#include <faiss/utils/Heap.h>

#include <algorithm>

#include "hnsw_file.hpp"
#include "simd_flat_ip.hpp"

namespace taconite::gallery {

namespace {

using idx_t = faiss::Index::idx_t;

constexpr std::size_t kHnswBatch = 8192;  // templates added between two looks at IndexOptions::cancel

// HNSW keeps the smallest distances: an inner product is searched as its negation (as FAISS's
// IndexHNSW does internally).
struct NegatedDistance : faiss::DistanceComputer {
  explicit NegatedDistance(std::unique_ptr<faiss::DistanceComputer> of) : base(std::move(of)) {}
  void set_query(const float* x) override { base->set_query(x); }
  float operator()(idx_t i) override { return -(*base)(i); }
  float symmetric_dis(idx_t i, idx_t j) override { return -base->symmetric_dis(i, j); }
  std::unique_ptr<faiss::DistanceComputer> base;
};

// What a saved file must have been built from: `source` with the options' graph parameters.
HnswBuildState build_state(const HnswSource& source, int m, int ef_construction) {
  ContentHash content;
  const auto dim = static_cast<std::size_t>(source.dim);
  for (std::size_t i = 0; i < source.template_ids.size(); ++i) {
    content.add(&source.template_ids[i], sizeof source.template_ids[i]);
    content.add(&source.template_identity[i], sizeof source.template_identity[i]);
    content.add(source.vectors.data() + i * dim, dim * sizeof(float));
  }
  return HnswBuildState{source.revision, source.template_ids.size(), source.dim, m, ef_construction,
                        source.model_fingerprint, content.value()};
}

class FaissHnsw final : public HnswIndex {
 public:
  FaissHnsw(std::unique_ptr<faiss::IndexHNSW> index, int m, int ef_construction)
      : index_(std::move(index)), m_(m), ef_construction_(ef_construction) {}

  // Searched through FAISS's HNSW directly with a beam of at least `count`: FAISS 1.7.3's
  // IndexHNSW::search returns at most about its efSearch results, whatever k is asked for.
  std::vector<std::pair<float, std::int64_t>> top(std::span<const float> unit, std::size_t count) const override {
    std::vector<float> similarities(count, 0.0f);
    std::vector<idx_t> positions(count, -1);
    NegatedDistance distance(std::unique_ptr<faiss::DistanceComputer>(index_->storage->get_distance_computer()));
    distance.set_query(unit.data());
    faiss::VisitedTable visited(index_->ntotal);
    faiss::SearchParametersHNSW params;
    params.efSearch = std::max(index_->hnsw.efSearch, static_cast<int>(count));
    faiss::maxheap_heapify(count, similarities.data(), positions.data());
    index_->hnsw.search(distance, static_cast<int>(count), positions.data(), similarities.data(), visited, &params);
    faiss::maxheap_reorder(count, similarities.data(), positions.data());
    std::vector<std::pair<float, std::int64_t>> best;
    for (std::size_t i = 0; i < count; ++i)  // -1 (or out of range) where HNSW returned fewer
      if (positions[i] >= 0 && positions[i] < index_->ntotal) best.emplace_back(-similarities[i], positions[i]);
    return best;
  }

  void set_ef_search(int ef_search) override { index_->hnsw.efSearch = ef_search; }

  Status save(const std::filesystem::path& gallery, const HnswSource& source,
              std::filesystem::perms mode) const override {
    return write_hnsw_file(hnsw_file_path(gallery), *index_, build_state(source, m_, ef_construction_), mode);
  }

 private:
  std::unique_ptr<faiss::IndexHNSW> index_;
  int m_, ef_construction_;
};

}  // namespace

bool hnsw_available() { return true; }

Result<std::unique_ptr<HnswIndex>> build_hnsw(const HnswSource& source, const IndexOptions& options) {
  auto hnsw = std::make_unique<faiss::IndexHNSWFlat>(source.dim, options.hnsw_m, faiss::METRIC_INNER_PRODUCT);
  delete hnsw->storage;  // owned (own_fields): the same flat storage, with our dot product
  hnsw->storage = new SimdFlatIP(source.dim);
  hnsw->hnsw.efConstruction = options.hnsw_ef_construction;
  const std::size_t count = source.template_ids.size();
  const auto dim = static_cast<std::size_t>(source.dim);
  for (std::size_t done = 0; done < count; done += kHnswBatch) {
    if (options.cancel && options.cancel->load()) return Error{ErrorKind::Io, kIndexBuildCancelled};
    const std::size_t n = std::min(kHnswBatch, count - done);
    hnsw->add(static_cast<idx_t>(n), source.vectors.data() + done * dim);
  }
  return std::unique_ptr<HnswIndex>(
      std::make_unique<FaissHnsw>(std::move(hnsw), options.hnsw_m, options.hnsw_ef_construction));
}

Result<std::unique_ptr<HnswIndex>> read_hnsw(const std::filesystem::path& gallery, const HnswSource& source,
                                             const IndexOptions& options) {
  Result<std::unique_ptr<faiss::Index>> read =
      read_hnsw_file(hnsw_file_path(gallery), build_state(source, options.hnsw_m, options.hnsw_ef_construction));
  if (!read) return read.error();
  // Adopted when it is ours and holds the source's vectors.
  std::unique_ptr<faiss::Index> loaded = std::move(read.value());
  auto* hnsw = dynamic_cast<faiss::IndexHNSWFlat*>(loaded.get());
  auto* flat = hnsw ? dynamic_cast<faiss::IndexFlatIP*>(hnsw->storage) : nullptr;
  const auto count = static_cast<idx_t>(source.template_ids.size());
  if (!flat || hnsw->ntotal != count || hnsw->d != source.dim || flat->ntotal != hnsw->ntotal ||
      hnsw->metric_type != faiss::METRIC_INNER_PRODUCT)
    return Error{ErrorKind::Io, kHnswNotOurs};
  hnsw->storage = SimdFlatIP::adopt(std::move(*flat)).release();
  delete flat;
  loaded.release();
  return std::unique_ptr<HnswIndex>(std::make_unique<FaissHnsw>(std::unique_ptr<faiss::IndexHNSW>(hnsw),
                                                                options.hnsw_m, options.hnsw_ef_construction));
}

}  // namespace taconite::gallery

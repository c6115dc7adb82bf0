// Search of a gallery with FAISS: inner product of L2-normalised embeddings (= cosine). Exact up
// to `approximate_above` templates (the vectors in an IndexFlatIP, searched by exact_scan.hpp:
// the same answers, ~8x faster than Debian's generic FAISS build), HNSW above (FAISS's graph on
// simd_flat_ip.hpp's distances). The HNSW index takes long to build, so it is persisted next to the gallery file (<gallery>.hnsw and <gallery>.hnsw.state)
// and rebuilt when the gallery's revision or the options changed. Several templates per identity:
// an identity's score is its best template's similarity.
//
// A GalleryIndex is immutable once built: search() may run on several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gallery_store.hpp"

namespace taconite::gallery {

struct IndexOptions {
  // Templates beyond which an HNSW index serves the search. Exact search is always right and takes
  // ~7 ms per 100 k templates on one AVX2 core; an HNSW build of 100 k takes minutes and at
  // efSearch 128 missed 12 % of the exact top-1s on random vectors (docs/performance.md).
  std::size_t approximate_above = 1000000;
  int hnsw_m = 32;                        // HNSW graph degree
  int hnsw_ef_construction = 64;          // build-time beam (quality of the graph vs build time)
  int hnsw_ef_search = 128;               // query-time beam (recall vs query time)
  bool persist = true;                    // save / reuse <gallery>.hnsw (a failed save is only a note)
};

struct IdentityMatch {
  std::int64_t identity_id = 0;
  std::string name;
  float similarity = 0.0f;  // cosine of the query and the identity's best template
  std::int64_t template_id = 0;
};

// The most templates one query inspects to rank identities (bounds the per-query work).
inline constexpr std::size_t kMaxCandidateTemplates = 4096;
inline constexpr int kMaxTopK = 100;
inline constexpr int kMaxEfSearch = 65536;  // bounds a query's HNSW beam

class GalleryIndex {
 public:
  // Reads the gallery and builds its index, or loads the persisted HNSW index when it is fresh.
  // `note` (optional) says what happened ("built exact index of N templates", "loaded ...",
  // "could not save ...").
  static Result<GalleryIndex> load(const GalleryStore& store, const IndexOptions& options, std::string* note = nullptr);

  // An index over given unit embeddings (benchmarks, tests): templates[i] belongs to identity
  // identity_ids[i]; `names` may be empty.
  static Result<GalleryIndex> build(int dim, std::span<const float> unit_embeddings,
                                    std::span<const std::int64_t> identity_ids, const IndexOptions& options);

  GalleryIndex(GalleryIndex&&) noexcept;
  GalleryIndex& operator=(GalleryIndex&&) noexcept;
  ~GalleryIndex();

  // The best `k` identities (1..kMaxTopK) for a query of dim() values (normalised here), best
  // first; fewer when the gallery has fewer. Empty for an empty gallery or a wrong-sized query.
  std::vector<IdentityMatch> search(std::span<const float> query, int k) const;

  // Changes the HNSW query beam (IndexOptions::hnsw_ef_search, clamped to 1..kMaxEfSearch). Not
  // safe while search() runs: FAISS 1.7.3 ignores a per-query beam (its SearchParametersHNSW), so
  // the index's own value is the only one that takes effect.
  void set_ef_search(int ef_search);
  int ef_search() const;  // the beam the HNSW index searches with (the option when exact)

  int dim() const;
  std::int64_t revision() const;  // the gallery revision it was built from
  std::size_t templates() const;
  std::size_t identities() const;
  bool approximate() const;
  const std::string& model() const;              // GalleryInfo::model
  const std::string& model_fingerprint() const;  // GalleryInfo::model_fingerprint

 private:
  struct Impl;
  explicit GalleryIndex(std::unique_ptr<Impl> impl);
  static Result<GalleryIndex> load_once(const GalleryStore& store, const IndexOptions& options, std::string* note);
  std::unique_ptr<Impl> impl_;
};

}  // namespace taconite::gallery

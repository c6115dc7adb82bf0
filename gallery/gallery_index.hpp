// Search of a gallery: inner product of L2-normalised embeddings (= cosine). Exact up to
// `approximate_above` templates (exact_scan.hpp), HNSW above (hnsw_index.hpp: FAISS's graph on
// simd_flat_ip.hpp's distances). The HNSW index takes long to build, so it is persisted next to
// the gallery as one file, <gallery>.hnsw (hnsw_file.hpp), and used only when it was built from
// exactly this gallery state (revision, templates' ids and vectors, options) and its checksum
// holds; otherwise it is rebuilt. A build without FAISS (-Dfaiss=disabled) has no HNSW: it
// searches every gallery exactly (approximate_unsupported(), and the load's note, say so). Several templates per identity: an
// identity's score is its best template's similarity. Templates holding NaN or Inf are left out
// (skipped_templates()): they would match nothing sensibly and break the search's bounds.
//
// A GalleryIndex is immutable once built: search() may run on several threads at once.
#pragma once

#include <atomic>
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
  // When the saved HNSW index cannot be used, search exactly for now instead of building it (which
  // takes minutes): approximate_pending() is then true, and a later load without this option builds it.
  bool defer_approximate = false;
  // Checked between batches of an HNSW build: when it becomes true the load fails ("cancelled").
  const std::atomic<bool>* cancel = nullptr;
};

struct IdentityMatch {
  std::int64_t identity_id = 0;
  std::string name;
  float similarity = 0.0f;  // cosine of the query and the identity's best template
  std::int64_t template_id = 0;
};

// An HNSW query asks for up to k x the largest template count of an identity, at most
// kFirstCandidateTemplates templates, and widens (doubling, up to kMaxCandidateTemplates) while
// they hold fewer than k identities. Exact search ranks identities directly, without a cap.
inline constexpr std::size_t kFirstCandidateTemplates = 4096;
inline constexpr std::size_t kMaxCandidateTemplates = 65536;
inline constexpr int kMaxTopK = 100;
// The error message of a load or build stopped through IndexOptions::cancel.
inline constexpr const char* kIndexBuildCancelled = "cancelled";
inline constexpr int kMaxEfSearch = 65536;  // bounds a query's HNSW beam

// False in a build without FAISS: no HNSW index, galleries above approximate_above are searched exactly.
bool approximate_search_available();

// False when `query` holds NaN or Inf (search() refuses such a query).
bool finite_query(std::span<const float> query);
// A finite `query` at unit length, as search() scores it (all zeros when its length is 0 or
// overflows).
std::vector<float> unit_query(std::span<const float> query);

class GalleryIndex {
 public:
  // Reads the gallery and builds its index, or loads the persisted HNSW index when it is fresh.
  // `note` (optional) says what happened ("built exact index of N templates", "loaded ...",
  // "could not save ...", "left out N templates holding NaN or Inf", "built without FAISS").
  // Never throws.
  static Result<GalleryIndex> load(const GalleryStore& store, const IndexOptions& options, std::string* note = nullptr);

  // An index over given unit embeddings (benchmarks, tests): templates[i] belongs to identity
  // identity_ids[i].
  static Result<GalleryIndex> build(int dim, std::span<const float> unit_embeddings,
                                    std::span<const std::int64_t> identity_ids, const IndexOptions& options);

  GalleryIndex(GalleryIndex&&) noexcept;
  GalleryIndex& operator=(GalleryIndex&&) noexcept;
  ~GalleryIndex();

  // The best `k` identities (1..kMaxTopK) for a query of dim() values (normalised here), best
  // first; fewer when the gallery has fewer. Empty for an empty gallery, a wrong-sized query or a
  // query holding NaN or Inf (check with finite_query() to tell the caller why).
  // Exact search returns the k identities with the largest float32 scores as exact_scan.hpp
  // computes them, ties broken by the lower template id: the same identities and scores as
  // IndexFlatIP up to float rounding, but identities whose scores differ by a few ulps (or tie)
  // may come in another order than FAISS's.
  std::vector<IdentityMatch> search(std::span<const float> query, int k) const;

  // Changes the HNSW query beam (IndexOptions::hnsw_ef_search, clamped to 1..kMaxEfSearch; a query
  // needing more candidates widens it). Not safe while search() runs.
  void set_ef_search(int ef_search);
  int ef_search() const;  // the beam the HNSW index searches with (the option when exact)

  int dim() const;
  std::int64_t revision() const;  // the gallery revision it was built from
  std::size_t templates() const;
  std::size_t identities() const;
  bool approximate() const;
  // The gallery is above approximate_above but this index searches exactly: the HNSW index is
  // still to be built (IndexOptions::defer_approximate).
  bool approximate_pending() const;
  // The gallery is above approximate_above but this build has no HNSW (approximate_search_available()):
  // searched exactly.
  bool approximate_unsupported() const;
  std::size_t skipped_templates() const;  // left out: they hold NaN or Inf
  const std::string& model() const;              // GalleryInfo::model
  const std::string& model_fingerprint() const;  // GalleryInfo::model_fingerprint

 private:
  struct Impl;
  explicit GalleryIndex(std::unique_ptr<Impl> impl);
  static Result<GalleryIndex> load_unguarded(const GalleryStore& store, const IndexOptions& options, std::string* note);
  std::unique_ptr<Impl> impl_;
};

}  // namespace taconite::gallery

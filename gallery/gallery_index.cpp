#include "gallery_index.hpp"

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/DistanceComputer.h>
#include <faiss/utils/Heap.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <tuple>
#include <unordered_map>

#include "exact_scan.hpp"
#include "hnsw_file.hpp"
#include "simd_flat_ip.hpp"

namespace taconite::gallery {

namespace {

using idx_t = faiss::Index::idx_t;

constexpr std::size_t kHnswBatch = 8192;  // templates added between two looks at IndexOptions::cancel

bool finite(std::span<const float> v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

// HNSW keeps the smallest distances: an inner product is searched as its negation (as FAISS's
// IndexHNSW does internally).
struct NegatedDistance : faiss::DistanceComputer {
  explicit NegatedDistance(std::unique_ptr<faiss::DistanceComputer> of) : base(std::move(of)) {}
  void set_query(const float* x) override { base->set_query(x); }
  float operator()(idx_t i) override { return -(*base)(i); }
  float symmetric_dis(idx_t i, idx_t j) override { return -base->symmetric_dis(i, j); }
  std::unique_ptr<faiss::DistanceComputer> base;
};

// The `count` best templates by the HNSW graph, best first, as (similarity, position); -1 marks
// none. Searched through FAISS's HNSW directly with a beam of at least `count`: FAISS 1.7.3's
// IndexHNSW::search returns at most about its efSearch results, whatever k is asked for.
void hnsw_search(const faiss::IndexHNSW& index, const float* query, std::size_t count, int ef_search,
                 std::vector<float>& similarities, std::vector<idx_t>& positions) {
  similarities.assign(count, 0.0f);
  positions.assign(count, -1);
  NegatedDistance distance(std::unique_ptr<faiss::DistanceComputer>(index.storage->get_distance_computer()));
  distance.set_query(query);
  faiss::VisitedTable visited(index.ntotal);
  faiss::SearchParametersHNSW params;
  params.efSearch = std::max(ef_search, static_cast<int>(count));
  faiss::maxheap_heapify(count, similarities.data(), positions.data());
  index.hnsw.search(distance, static_cast<int>(count), positions.data(), similarities.data(), visited, &params);
  faiss::maxheap_reorder(count, similarities.data(), positions.data());
  for (float& s : similarities) s = -s;
}

}  // namespace

bool finite_query(std::span<const float> query) { return finite(query); }

std::vector<float> unit_query(std::span<const float> query) {
  double sum = 0.0;
  for (float x : query) sum += static_cast<double>(x) * x;
  const double scale = sum > 0.0 && std::isfinite(sum) ? 1.0 / std::sqrt(sum) : 0.0;
  std::vector<float> out(query.size());
  for (std::size_t i = 0; i < query.size(); ++i) out[i] = static_cast<float>(query[i] * scale);
  return out;
}

struct GalleryIndex::Impl {
  int dim = 0;
  std::int64_t revision = 0;
  std::string model, fingerprint;
  IndexOptions options;
  std::unique_ptr<faiss::Index> index;
  std::unique_ptr<ExactScan> exact_scan;  // searches `index`'s vectors when not approximate
  bool approximate = false, approximate_pending = false;
  std::size_t skipped = 0;
  std::vector<std::int64_t> template_ids;       // index position -> template id
  std::vector<std::int64_t> template_identity;  // index position -> identity id
  std::unordered_map<std::int64_t, std::string> names;
  std::size_t identity_count = 0;
  std::size_t max_templates_per_identity = 0;

  // Dense identity numbers per position (the exact scan's groups) and the per-identity counts.
  std::vector<std::uint32_t> count_identities() {
    std::unordered_map<std::int64_t, std::uint32_t> dense;
    std::vector<std::size_t> per_identity;
    std::vector<std::uint32_t> groups;
    groups.reserve(template_identity.size());
    for (std::int64_t id : template_identity) {
      const auto [it, added] = dense.emplace(id, static_cast<std::uint32_t>(dense.size()));
      if (added) per_identity.push_back(0);
      ++per_identity[it->second];
      groups.push_back(it->second);
    }
    identity_count = dense.size();
    max_templates_per_identity = per_identity.empty() ? 0 : *std::max_element(per_identity.begin(), per_identity.end());
    return groups;
  }

  std::unique_ptr<faiss::Index> make_index() const {
    if (!approximate) return std::make_unique<faiss::IndexFlatIP>(dim);
    auto hnsw = std::make_unique<faiss::IndexHNSWFlat>(dim, options.hnsw_m, faiss::METRIC_INNER_PRODUCT);
    delete hnsw->storage;  // owned (own_fields): the same flat storage, with our dot product
    hnsw->storage = new SimdFlatIP(dim);
    hnsw->hnsw.efConstruction = options.hnsw_ef_construction;
    return hnsw;
  }

  // Builds the index of `count` vectors and prepares its search; false when cancelled.
  bool build(std::size_t count, const float* vectors) {
    index = make_index();
    if (!approximate) {
      index->add(static_cast<idx_t>(count), vectors);
      start_exact_scan(count);
      return true;
    }
    count_identities();
    for (std::size_t done = 0; done < count; done += kHnswBatch) {
      if (options.cancel && options.cancel->load()) return false;
      const std::size_t n = std::min(kHnswBatch, count - done);
      index->add(static_cast<idx_t>(n), vectors + done * static_cast<std::size_t>(dim));
    }
    return true;
  }

  // The same from `count` vectors already laid out as the flat index stores them (float32 bytes):
  // an exact index takes them over instead of copying them (FAISS's add zero-fills, then copies:
  // a third of a 100 k load).
  bool build(std::size_t count, std::vector<std::uint8_t> bytes) {
    if (approximate) return build(count, reinterpret_cast<const float*>(bytes.data()));
    auto flat = std::make_unique<faiss::IndexFlatIP>(dim);
    flat->codes = std::move(bytes);
    flat->ntotal = static_cast<idx_t>(count);
    index = std::move(flat);
    start_exact_scan(count);
    return true;
  }

  void start_exact_scan(std::size_t count) {
    const auto& flat = static_cast<const faiss::IndexFlatIP&>(*index);
    exact_scan = std::make_unique<ExactScan>(dim, std::span(flat.get_xb(), count * static_cast<std::size_t>(dim)),
                                             count_identities());
  }

  // Adopts a read HNSW index when it is ours and holds `count` vectors of `dim`.
  bool adopt(std::unique_ptr<faiss::Index> loaded, std::size_t count) {
    auto* hnsw = dynamic_cast<faiss::IndexHNSWFlat*>(loaded.get());
    auto* flat = hnsw ? dynamic_cast<faiss::IndexFlatIP*>(hnsw->storage) : nullptr;
    if (!flat || hnsw->ntotal != static_cast<idx_t>(count) || hnsw->d != dim || flat->ntotal != hnsw->ntotal ||
        hnsw->metric_type != faiss::METRIC_INNER_PRODUCT)
      return false;
    hnsw->storage = SimdFlatIP::adopt(std::move(*flat)).release();
    delete flat;
    index = std::move(loaded);
    count_identities();
    return true;
  }
};

GalleryIndex::GalleryIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GalleryIndex::GalleryIndex(GalleryIndex&&) noexcept = default;
GalleryIndex& GalleryIndex::operator=(GalleryIndex&&) noexcept = default;
GalleryIndex::~GalleryIndex() = default;

Result<GalleryIndex> GalleryIndex::build(int dim, std::span<const float> unit_embeddings,
                                         std::span<const std::int64_t> identity_ids, const IndexOptions& options) {
  if (dim < 1 || dim > kMaxEmbeddingDim ||
      unit_embeddings.size() != identity_ids.size() * static_cast<std::size_t>(dim))
    return Error{ErrorKind::Input, "index build: " + std::to_string(unit_embeddings.size()) + " values for " +
                                       std::to_string(identity_ids.size()) + " templates of " + std::to_string(dim)};
  if (!finite(unit_embeddings)) return Error{ErrorKind::Input, "index build: the templates hold NaN or Inf"};
  auto impl = std::make_unique<Impl>();
  impl->dim = dim;
  impl->options = options;
  impl->template_identity.assign(identity_ids.begin(), identity_ids.end());
  impl->template_ids.resize(identity_ids.size());
  for (std::size_t i = 0; i < identity_ids.size(); ++i) impl->template_ids[i] = static_cast<std::int64_t>(i);
  impl->approximate = identity_ids.size() > options.approximate_above;
  try {
    if (!impl->build(identity_ids.size(), unit_embeddings.data())) return Error{ErrorKind::Io, kIndexBuildCancelled};
  } catch (const std::exception& e) {
    return Error{ErrorKind::Device, std::string("FAISS index build failed: ") + e.what()};
  }
  GalleryIndex index(std::move(impl));
  index.set_ef_search(options.hnsw_ef_search);
  return index;
}

namespace {

struct GalleryContents {
  GalleryInfo info;
  std::vector<IdentityRow> identities;
  std::vector<TemplateRow> templates;  // with embeddings
};

// The gallery as of one revision: one read transaction, ended before any index is built (a long
// HNSW build must not keep SQLite from checkpointing its WAL).
Result<GalleryContents> read_contents(const GalleryStore& store) {
  Result<GalleryStore::ReadSnapshot> snapshot = store.read_snapshot();
  if (!snapshot) return snapshot.error();
  Result<GalleryInfo> info = store.info();
  if (!info) return info.error();
  Result<std::vector<IdentityRow>> identities = store.identities();
  if (!identities) return identities.error();
  Result<std::vector<TemplateRow>> templates = store.templates(true);
  if (!templates) return templates.error();
  return GalleryContents{std::move(info.value()), std::move(identities.value()), std::move(templates.value())};
}

}  // namespace

Result<GalleryIndex> GalleryIndex::load(const GalleryStore& store, const IndexOptions& options, std::string* note) {
  try {
    return load_unguarded(store, options, note);
  } catch (const std::exception& e) {  // e.g. bad_alloc for a gallery larger than memory
    return Error{ErrorKind::Device, store.path().string() + ": cannot load the gallery's index: " + e.what()};
  }
}

Result<GalleryIndex> GalleryIndex::load_unguarded(const GalleryStore& store, const IndexOptions& options,
                                             std::string* note) {
  Result<GalleryContents> contents = read_contents(store);
  if (!contents) return contents.error();
  const GalleryInfo& info = contents.value().info;
  std::vector<TemplateRow>& rows = contents.value().templates;

  auto impl = std::make_unique<Impl>();
  impl->dim = info.embedding_dim;
  impl->revision = info.revision;
  impl->model = info.model;
  impl->fingerprint = info.model_fingerprint;
  impl->options = options;
  for (const IdentityRow& r : contents.value().identities) impl->names.emplace(r.id, r.name);
  // The index's vectors, in id order; what they are is hashed to tie a saved index to them.
  const auto dim = static_cast<std::size_t>(impl->dim);
  std::vector<std::uint8_t> vectors;  // float32 bytes, as the flat index stores them
  vectors.reserve(rows.size() * dim * sizeof(float));
  ContentHash content;
  for (const TemplateRow& r : rows) {
    if (r.embedding.size() != dim || !finite(r.embedding)) {
      ++impl->skipped;
      continue;
    }
    impl->template_ids.push_back(r.id);
    impl->template_identity.push_back(r.identity_id);
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(r.embedding.data());
    vectors.insert(vectors.end(), bytes, bytes + dim * sizeof(float));
    content.add(&r.id, sizeof r.id);
    content.add(&r.identity_id, sizeof r.identity_id);
    content.add(r.embedding.data(), r.embedding.size() * sizeof(float));
  }
  rows.clear();
  rows.shrink_to_fit();
  const std::size_t count = impl->template_ids.size();
  impl->approximate = count > options.approximate_above;
  const HnswBuildState wanted{impl->revision, count, impl->dim, options.hnsw_m, options.hnsw_ef_construction,
                              impl->fingerprint, content.value()};
  const std::filesystem::path& gallery = store.path();
  const std::filesystem::path saved = hnsw_file_path(gallery);
  std::string what;
  if (impl->approximate && options.persist && !store.remote()) {
    Result<std::unique_ptr<faiss::Index>> read = read_hnsw_file(saved, wanted);
    const std::string why = read ? "" : read.error().message;
    if (read && impl->adopt(std::move(read.value()), count))
      what = "loaded the HNSW index " + saved.string();
    else if (why.starts_with("damaged") || why.starts_with("unreadable"))
      what = saved.string() + " " + why + ", not used; ";
    else if (why.empty())
      what = saved.string() + " is not an HNSW index of this gallery, not used; ";
  }
  if (!impl->index) {
    if (impl->approximate && options.defer_approximate) {
      impl->approximate = false;
      impl->approximate_pending = true;
    }
    try {
      if (!impl->build(count, std::move(vectors))) return Error{ErrorKind::Io, kIndexBuildCancelled};
    } catch (const std::exception& e) {
      return Error{ErrorKind::Device, gallery.string() + ": FAISS index build failed: " + e.what()};
    }
    what += std::string("built the ") + (impl->approximate ? "HNSW" : "exact") + " index of " + std::to_string(count) +
            " templates";
    if (impl->approximate_pending) what += " (the HNSW index is built next)";
    if (impl->approximate && options.persist && !store.remote()) {
      std::error_code ec;
      const auto mode = std::filesystem::status(gallery, ec).permissions();
      const Status written = write_hnsw_file(saved, *impl->index, wanted, ec ? std::filesystem::perms::owner_read |
                                                                                   std::filesystem::perms::owner_write
                                                                             : mode);
      what += written ? ", saved to " + saved.string() : "; " + written.error().message + " (rebuilt on every load)";
    }
  }
  if (impl->skipped > 0)
    what += "; left out " + std::to_string(impl->skipped) + " templates holding NaN or Inf (re-enroll them)";
  if (note) *note = what;
  GalleryIndex index(std::move(impl));
  index.set_ef_search(options.hnsw_ef_search);  // also over the value a saved index file carries
  return index;
}

std::vector<IdentityMatch> GalleryIndex::search(std::span<const float> query, int k) const {
  const Impl& d = *impl_;
  const auto total = static_cast<std::size_t>(d.index ? d.index->ntotal : 0);
  if (total == 0 || static_cast<int>(query.size()) != d.dim || k < 1 || !finite(query)) return {};
  k = std::min(k, kMaxTopK);
  const std::vector<float> unit = unit_query(query);
  std::vector<std::pair<float, idx_t>> best;  // (similarity, position), best first
  try {
    if (!d.approximate) {
      for (const auto& [similarity, position] : d.exact_scan->top(unit, static_cast<std::size_t>(k)))
        best.emplace_back(similarity, position);  // already the best template of each identity
    } else {
      // Enough templates that the best k identities are among them even when one has many
      // templates; more while they hold fewer than k identities.
      const auto& hnsw = static_cast<const faiss::IndexHNSW&>(*d.index);
      std::size_t candidates =
          std::min({total, static_cast<std::size_t>(k) * std::max<std::size_t>(1, d.max_templates_per_identity),
                    kFirstCandidateTemplates});
      std::vector<float> similarities;
      std::vector<idx_t> positions;
      for (;;) {
        hnsw_search(hnsw, unit.data(), candidates, d.options.hnsw_ef_search, similarities, positions);
        best.clear();
        std::unordered_map<std::int64_t, bool> seen;
        for (std::size_t i = 0; i < candidates && static_cast<int>(best.size()) < k; ++i) {
          const idx_t p = positions[i];
          if (p < 0 || static_cast<std::size_t>(p) >= total) continue;  // HNSW may return fewer
          // Results come best first: the first template of an identity is its best.
          if (seen.emplace(d.template_identity[static_cast<std::size_t>(p)], true).second)
            best.emplace_back(similarities[i], p);
        }
        const std::size_t widest = std::min(total, kMaxCandidateTemplates);
        if (static_cast<int>(best.size()) >= k || best.size() >= d.identity_count || candidates >= widest) break;
        candidates = std::min(widest, candidates * 2);
      }
    }
  } catch (const std::exception&) {
    return {};
  }
  std::vector<IdentityMatch> matches;
  for (const auto& [similarity, p] : best) {
    const std::int64_t identity = d.template_identity[static_cast<std::size_t>(p)];
    const auto name = d.names.find(identity);
    matches.push_back({identity, name == d.names.end() ? std::string() : name->second, similarity,
                       d.template_ids[static_cast<std::size_t>(p)]});
  }
  return matches;
}

void GalleryIndex::set_ef_search(int ef_search) {
  impl_->options.hnsw_ef_search = std::clamp(ef_search, 1, kMaxEfSearch);
  if (auto* hnsw = dynamic_cast<faiss::IndexHNSW*>(impl_->index.get()))
    hnsw->hnsw.efSearch = impl_->options.hnsw_ef_search;
}

int GalleryIndex::ef_search() const {
  if (const auto* hnsw = dynamic_cast<const faiss::IndexHNSW*>(impl_->index.get())) return hnsw->hnsw.efSearch;
  return impl_->options.hnsw_ef_search;
}
int GalleryIndex::dim() const { return impl_->dim; }
std::int64_t GalleryIndex::revision() const { return impl_->revision; }
std::size_t GalleryIndex::templates() const { return impl_->template_ids.size(); }
std::size_t GalleryIndex::identities() const { return impl_->identity_count; }
bool GalleryIndex::approximate() const { return impl_->approximate; }
bool GalleryIndex::approximate_pending() const { return impl_->approximate_pending; }
std::size_t GalleryIndex::skipped_templates() const { return impl_->skipped; }
const std::string& GalleryIndex::model() const { return impl_->model; }
const std::string& GalleryIndex::model_fingerprint() const { return impl_->fingerprint; }

}  // namespace taconite::gallery

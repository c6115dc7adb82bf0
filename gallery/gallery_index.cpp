#include "gallery_index.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <tuple>
#include <unordered_map>

#include "exact_scan.hpp"
#include "hnsw_index.hpp"

namespace taconite::gallery {

namespace {

bool finite(std::span<const float> v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

}  // namespace

bool finite_query(std::span<const float> query) { return finite(query); }

bool approximate_search_available() { return hnsw_available(); }

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
  std::vector<float> vectors;             // the templates when exact (exact_scan reads them)
  std::unique_ptr<ExactScan> exact_scan;  // when not approximate
  std::unique_ptr<HnswIndex> hnsw;        // when approximate
  bool approximate = false, approximate_pending = false, approximate_unsupported = false;
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

  // Above approximate_above an HNSW graph searches, when this build has one; else exact search
  // does (approximate_unsupported).
  void choose_search(std::size_t count) {
    const bool wanted = count > options.approximate_above;
    approximate = wanted && hnsw_available();
    approximate_unsupported = wanted && !approximate;
  }

  HnswSource source(std::span<const float> of) const {
    return HnswSource{revision, fingerprint, dim, template_ids, template_identity, of};
  }

  // Builds the search of `rows` (all the templates' values): an HNSW graph copies them, an exact
  // search keeps them, taking `owned` over when it holds them (else a copy). An error when the HNSW
  // build was cancelled.
  Status build(std::span<const float> rows, std::vector<float>* owned = nullptr) {
    if (approximate) {
      Result<std::unique_ptr<HnswIndex>> built = build_hnsw(source(rows), options);
      if (!built) return built.error();
      hnsw = std::move(built.value());
      count_identities();
      return Ok{};
    }
    vectors = owned ? std::move(*owned) : std::vector<float>(rows.begin(), rows.end());
    exact_scan = std::make_unique<ExactScan>(dim, vectors, count_identities());
    return Ok{};
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
  impl->choose_search(identity_ids.size());
  try {
    if (Status built = impl->build(unit_embeddings); !built) return built.error();
  } catch (const std::exception& e) {
    return Error{ErrorKind::Device, std::string("index build failed: ") + e.what()};
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
  // The index's vectors, in id order.
  const auto dim = static_cast<std::size_t>(impl->dim);
  std::vector<float> vectors;
  vectors.reserve(rows.size() * dim);
  for (const TemplateRow& r : rows) {
    if (r.embedding.size() != dim || !finite(r.embedding)) {
      ++impl->skipped;
      continue;
    }
    impl->template_ids.push_back(r.id);
    impl->template_identity.push_back(r.identity_id);
    vectors.insert(vectors.end(), r.embedding.begin(), r.embedding.end());
  }
  rows.clear();
  rows.shrink_to_fit();
  const std::size_t count = impl->template_ids.size();
  impl->choose_search(count);
  const std::filesystem::path& gallery = store.path();
  const std::string saved = hnsw_file_path(gallery).string();
  std::string what;
  if (impl->approximate && options.persist && !store.remote()) {
    Result<std::unique_ptr<HnswIndex>> read = read_hnsw(gallery, impl->source(vectors), options);
    const std::string why = read ? "" : read.error().message;
    if (read) {
      impl->hnsw = std::move(read.value());
      impl->count_identities();
      what = "loaded the HNSW index " + saved;
    } else if (why.starts_with("damaged") || why.starts_with("unreadable") || why == kHnswNotOurs) {
      what = saved + " " + why + ", not used; ";
    }
  }
  if (!impl->hnsw) {
    if (impl->approximate && options.defer_approximate) {
      impl->approximate = false;
      impl->approximate_pending = true;
    }
    try {
      if (Status built = impl->build(vectors, &vectors); !built) return built.error();
    } catch (const std::exception& e) {
      return Error{ErrorKind::Device, gallery.string() + ": index build failed: " + e.what()};
    }
    what += std::string("built the ") + (impl->approximate ? "HNSW" : "exact") + " index of " + std::to_string(count) +
            " templates";
    if (impl->approximate_pending) what += " (the HNSW index is built next)";
    if (impl->approximate_unsupported)
      what += " (above approximate-above " + std::to_string(options.approximate_above) +
              ", but this taconite was built without FAISS: exact search, always right, slower)";
    if (impl->approximate && options.persist && !store.remote()) {
      std::error_code ec;
      const auto mode = std::filesystem::status(gallery, ec).permissions();
      const Status written = impl->hnsw->save(gallery, impl->source(vectors), ec ? std::filesystem::perms::owner_read |
                                                                                    std::filesystem::perms::owner_write
                                                                              : mode);
      what += written ? ", saved to " + saved : "; " + written.error().message + " (rebuilt on every load)";
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
  const std::size_t total = d.template_ids.size();
  if (total == 0 || static_cast<int>(query.size()) != d.dim || k < 1 || !finite(query)) return {};
  k = std::min(k, kMaxTopK);
  const std::vector<float> unit = unit_query(query);
  std::vector<std::pair<float, std::int64_t>> best;  // (similarity, position), best first
  try {
    if (!d.approximate) {
      best = d.exact_scan->top(unit, static_cast<std::size_t>(k));  // already the best template of each identity
    } else {
      // Enough templates that the best k identities are among them even when one has many
      // templates; more while they hold fewer than k identities.
      std::size_t candidates =
          std::min({total, static_cast<std::size_t>(k) * std::max<std::size_t>(1, d.max_templates_per_identity),
                    kFirstCandidateTemplates});
      for (;;) {
        best.clear();
        std::unordered_map<std::int64_t, bool> seen;
        for (const auto& [similarity, p] : d.hnsw->top(unit, candidates)) {
          if (static_cast<int>(best.size()) >= k) break;
          // Results come best first: the first template of an identity is its best.
          if (seen.emplace(d.template_identity[static_cast<std::size_t>(p)], true).second)
            best.emplace_back(similarity, p);
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
  if (impl_->hnsw) impl_->hnsw->set_ef_search(impl_->options.hnsw_ef_search);
}

int GalleryIndex::ef_search() const { return impl_->options.hnsw_ef_search; }
int GalleryIndex::dim() const { return impl_->dim; }
std::int64_t GalleryIndex::revision() const { return impl_->revision; }
std::size_t GalleryIndex::templates() const { return impl_->template_ids.size(); }
std::size_t GalleryIndex::identities() const { return impl_->identity_count; }
bool GalleryIndex::approximate() const { return impl_->approximate; }
bool GalleryIndex::approximate_pending() const { return impl_->approximate_pending; }
bool GalleryIndex::approximate_unsupported() const { return impl_->approximate_unsupported; }
std::size_t GalleryIndex::skipped_templates() const { return impl_->skipped; }
const std::string& GalleryIndex::model() const { return impl_->model; }
const std::string& GalleryIndex::model_fingerprint() const { return impl_->fingerprint; }

}  // namespace taconite::gallery

#include "gallery_index.hpp"

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/index_io.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <fstream>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "exact_scan.hpp"
#include "simd_flat_ip.hpp"

namespace taconite::gallery {

namespace {

using idx_t = faiss::Index::idx_t;

const std::string kChangedWhileReading = "the gallery kept changing while its index was read; try again";

// What the persisted HNSW index was built from; a different state means it is stale.
struct IndexState {
  std::int64_t revision = -1;
  std::size_t templates = 0;
  int dim = 0, m = 0, ef_construction = 0;
  std::string fingerprint;

  bool operator==(const IndexState&) const = default;
};

std::string state_text(const IndexState& s) {
  std::ostringstream out;
  out << "taconite-gallery-hnsw 1\nrevision " << s.revision << "\ntemplates " << s.templates << "\ndim " << s.dim
      << "\nm " << s.m << "\nef_construction " << s.ef_construction << "\nfingerprint " << s.fingerprint << "\n";
  return out.str();
}

std::string read_small_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  char buffer[1024];
  in.read(buffer, sizeof buffer);  // a state file is ~150 bytes; a larger one is not ours
  text.write(buffer, in.gcount());
  return text.str();
}

std::filesystem::path index_path(const std::filesystem::path& gallery) { return gallery.string() + ".hnsw"; }
std::filesystem::path state_path(const std::filesystem::path& gallery) { return gallery.string() + ".hnsw.state"; }

// Writes to a private temporary file, then renames: readers see the old or the new file whole.
bool replace_file(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.flush()) return false;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  return !ec;
}

std::vector<float> normalised(std::span<const float> v) {
  double sum = 0.0;
  for (float x : v) sum += static_cast<double>(x) * x;
  const double scale = sum > 0.0 && std::isfinite(sum) ? 1.0 / std::sqrt(sum) : 0.0;
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(v[i] * scale);
  return out;
}

}  // namespace

struct GalleryIndex::Impl {
  int dim = 0;
  std::int64_t revision = 0;
  std::string model, fingerprint;
  IndexOptions options;
  std::unique_ptr<faiss::Index> index;
  std::unique_ptr<ExactScan> exact_scan;  // searches `index`'s vectors when not approximate
  bool approximate = false;
  std::vector<std::int64_t> template_ids;       // index position -> template id
  std::vector<std::int64_t> template_identity;  // index position -> identity id
  std::unordered_map<std::int64_t, std::string> names;
  std::size_t identity_count = 0;
  std::size_t max_templates_per_identity = 0;

  void count_identities() {
    std::unordered_map<std::int64_t, std::size_t> per_identity;
    for (std::int64_t id : template_identity) ++per_identity[id];
    identity_count = per_identity.size();
    max_templates_per_identity = 0;
    for (const auto& [id, n] : per_identity) max_templates_per_identity = std::max(max_templates_per_identity, n);
  }

  std::unique_ptr<faiss::Index> make_index(std::size_t count) const {
    if (count <= options.approximate_above) return std::make_unique<faiss::IndexFlatIP>(dim);
    auto hnsw = std::make_unique<faiss::IndexHNSWFlat>(dim, options.hnsw_m, faiss::METRIC_INNER_PRODUCT);
    delete hnsw->storage;  // owned (own_fields): the same flat storage, with our dot product
    hnsw->storage = new SimdFlatIP(dim);
    hnsw->hnsw.efConstruction = options.hnsw_ef_construction;
    return hnsw;
  }

  // Fills the index with `count` vectors and prepares its search.
  void add(std::size_t count, const float* vectors) {
    index->add(static_cast<idx_t>(count), vectors);
    if (approximate) return;
    const auto& flat = static_cast<const faiss::IndexFlatIP&>(*index);
    exact_scan = std::make_unique<ExactScan>(dim, std::span(flat.get_xb(), count * static_cast<std::size_t>(dim)));
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
  auto impl = std::make_unique<Impl>();
  impl->dim = dim;
  impl->options = options;
  impl->template_identity.assign(identity_ids.begin(), identity_ids.end());
  impl->template_ids.resize(identity_ids.size());
  for (std::size_t i = 0; i < identity_ids.size(); ++i) impl->template_ids[i] = static_cast<std::int64_t>(i);
  impl->count_identities();
  try {
    impl->index = impl->make_index(identity_ids.size());
    impl->approximate = identity_ids.size() > options.approximate_above;
    impl->add(identity_ids.size(), unit_embeddings.data());
  } catch (const std::exception& e) {
    return Error{ErrorKind::Device, std::string("FAISS index build failed: ") + e.what()};
  }
  GalleryIndex index(std::move(impl));
  index.set_ef_search(options.hnsw_ef_search);
  return index;
}

Result<GalleryIndex> GalleryIndex::load(const GalleryStore& store, const IndexOptions& options, std::string* note) {
  // A write between the reads gives a mixed picture: retry a few times, then give up.
  constexpr int kAttempts = 4;
  for (int attempt = 1;; ++attempt) {
    Result<GalleryIndex> index = load_once(store, options, note);
    if (index.ok() || index.error().kind != ErrorKind::Io || index.error().message != kChangedWhileReading ||
        attempt == kAttempts)
      return index;
  }
}

Result<GalleryIndex> GalleryIndex::load_once(const GalleryStore& store, const IndexOptions& options,
                                             std::string* note) {
  // One read transaction: the identities, templates and embeddings below are of one revision.
  Result<GalleryStore::ReadSnapshot> snapshot = store.read_snapshot();
  if (!snapshot) return snapshot.error();
  Result<GalleryInfo> info = store.info();
  if (!info) return info.error();
  Result<std::vector<IdentityRow>> identities = store.identities();
  if (!identities) return identities.error();
  Result<std::vector<TemplateRow>> rows = store.templates(false);
  if (!rows) return rows.error();
  Result<std::int64_t> revision = store.revision();
  if (!revision) return revision.error();
  if (revision.value() != info.value().revision) return Error{ErrorKind::Io, kChangedWhileReading};

  auto impl = std::make_unique<Impl>();
  impl->dim = info.value().embedding_dim;
  impl->revision = info.value().revision;
  impl->model = info.value().model;
  impl->fingerprint = info.value().model_fingerprint;
  impl->options = options;
  for (const IdentityRow& r : identities.value()) impl->names.emplace(r.id, r.name);
  for (const TemplateRow& r : rows.value()) {
    impl->template_ids.push_back(r.id);
    impl->template_identity.push_back(r.identity_id);
  }
  impl->count_identities();
  const std::size_t count = rows.value().size();
  impl->approximate = count > options.approximate_above;
  const IndexState wanted{impl->revision,   count, impl->dim, options.hnsw_m, options.hnsw_ef_construction,
                          impl->fingerprint};
  const std::filesystem::path& gallery = store.path();
  std::string what;
  try {
    // A fresh persisted HNSW index: its positions are the templates in id order at that revision.
    if (impl->approximate && options.persist && read_small_file(state_path(gallery)) == state_text(wanted)) {
      std::unique_ptr<faiss::Index> loaded(faiss::read_index(index_path(gallery).c_str()));
      auto* hnsw = dynamic_cast<faiss::IndexHNSWFlat*>(loaded.get());
      auto* flat = hnsw ? dynamic_cast<faiss::IndexFlatIP*>(hnsw->storage) : nullptr;
      if (flat && hnsw->ntotal == static_cast<idx_t>(count) && hnsw->d == impl->dim) {
        hnsw->storage = SimdFlatIP::adopt(std::move(*flat)).release();
        delete flat;
        impl->index = std::move(loaded);
        what = "loaded the HNSW index " + index_path(gallery).string();
      }
    }
  } catch (const std::exception& e) {
    what = "rebuilt: " + index_path(gallery).string() + " unreadable (" + e.what() + "); ";
  }
  if (!impl->index) {
    Result<std::vector<TemplateRow>> full = store.templates(true);
    if (!full) return full.error();
    if (full.value().size() != count || (count && full.value().back().id != impl->template_ids.back()))
      return Error{ErrorKind::Io, kChangedWhileReading};
    std::vector<float> vectors;
    vectors.reserve(count * static_cast<std::size_t>(impl->dim));
    for (const TemplateRow& r : full.value()) vectors.insert(vectors.end(), r.embedding.begin(), r.embedding.end());
    try {
      impl->index = impl->make_index(count);
      impl->add(count, vectors.data());
    } catch (const std::exception& e) {
      return Error{ErrorKind::Device, gallery.string() + ": FAISS index build failed: " + e.what()};
    }
    what += std::string("built the ") + (impl->approximate ? "HNSW" : "exact") + " index of " + std::to_string(count) +
            " templates";
    if (impl->approximate && options.persist) {
      bool saved = false;
      try {
        const std::string tmp = index_path(gallery).string() + ".tmp" + std::to_string(getpid());
        faiss::write_index(impl->index.get(), tmp.c_str());
        std::error_code ec;
        std::filesystem::rename(tmp, index_path(gallery), ec);
        saved = !ec && replace_file(state_path(gallery), state_text(wanted));
      } catch (const std::exception&) {
      }
      what += saved ? ", saved to " + index_path(gallery).string()
                    : "; could not save it to " + index_path(gallery).string() + " (rebuilt on every load)";
    }
  }
  if (note) *note = what;
  GalleryIndex index(std::move(impl));
  index.set_ef_search(options.hnsw_ef_search);  // also over the value a saved index file carries
  return index;
}

std::vector<IdentityMatch> GalleryIndex::search(std::span<const float> query, int k) const {
  const Impl& d = *impl_;
  const auto total = static_cast<std::size_t>(d.index ? d.index->ntotal : 0);
  if (total == 0 || static_cast<int>(query.size()) != d.dim || k < 1) return {};
  k = std::min(k, kMaxTopK);
  // Enough templates that the best k identities are among them even when one has many templates.
  const std::size_t wanted = std::max<std::size_t>(k, static_cast<std::size_t>(k) * d.max_templates_per_identity);
  const auto candidates = static_cast<idx_t>(std::min({total, wanted, kMaxCandidateTemplates}));
  const std::vector<float> unit = normalised(query);
  std::vector<float> similarities(static_cast<std::size_t>(candidates));
  std::vector<idx_t> positions(static_cast<std::size_t>(candidates));
  try {
    if (d.approximate) {  // FAISS widens the beam to `candidates` when that is larger
      d.index->search(1, unit.data(), candidates, similarities.data(), positions.data());
    } else {
      const auto best = d.exact_scan->top(unit, static_cast<std::size_t>(candidates));
      for (std::size_t i = 0; i < best.size(); ++i) std::tie(similarities[i], positions[i]) = best[i];
    }
  } catch (const std::exception&) {
    return {};
  }
  std::vector<IdentityMatch> matches;
  for (idx_t i = 0; i < candidates && static_cast<int>(matches.size()) < k; ++i) {
    const idx_t p = positions[static_cast<std::size_t>(i)];
    if (p < 0 || static_cast<std::size_t>(p) >= total) continue;  // HNSW may return fewer
    const std::int64_t identity = d.template_identity[static_cast<std::size_t>(p)];
    // Results come best first: the first template of an identity is its best.
    if (std::any_of(matches.begin(), matches.end(), [&](const IdentityMatch& m) { return m.identity_id == identity; }))
      continue;
    const auto name = d.names.find(identity);
    matches.push_back({identity, name == d.names.end() ? std::string() : name->second,
                       similarities[static_cast<std::size_t>(i)], d.template_ids[static_cast<std::size_t>(p)]});
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
const std::string& GalleryIndex::model() const { return impl_->model; }
const std::string& GalleryIndex::model_fingerprint() const { return impl_->fingerprint; }

}  // namespace taconite::gallery

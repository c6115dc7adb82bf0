// GalleryStore, backend-neutral: it picks the backend from the location, checks what callers
// give before a backend stores it, and scopes transactions (ReadSnapshot, WriteBatch). The
// storage is sqlite_store.cpp or pg_store.cpp (gallery_backend.hpp, pg_backend.hpp).
#include "gallery_store.hpp"

#include <utility>

#include "gallery_backend.hpp"
#include "identity_fields.hpp"
#include "pg_backend.hpp"
#include "sqlite_store.hpp"
#include "unknown_fields.hpp"

namespace taconite::gallery {

bool is_postgres_location(std::string_view location) {
  if (location.starts_with("postgresql://") || location.starts_with("postgres://")) return true;
  // A libpq key=value string: its first key is one of libpq's keywords (a file path holding '='
  // is far-fetched).
  const std::size_t equals = location.find('=');
  if (equals == std::string_view::npos) return false;
  std::string_view key = location.substr(0, equals);
  while (!key.empty() && (key.front() == ' ' || key.front() == '\t')) key.remove_prefix(1);
  while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
  return is_libpq_keyword(key);
}

namespace {

// The schema check of open(): a version this program reads and a sane embedding size.
Status check_schema(const std::filesystem::path& path, const GalleryInfo& info) {
  if (info.schema_version < kOldestReadableSchemaVersion || info.schema_version > kSchemaVersion)
    return Error{ErrorKind::Io, path.string() + ": gallery schema version " + std::to_string(info.schema_version) +
                                    ", this program reads versions " + std::to_string(kOldestReadableSchemaVersion) +
                                    ".." + std::to_string(kSchemaVersion)};
  if (info.embedding_dim < 1 || info.embedding_dim > kMaxEmbeddingDim)
    return Error{ErrorKind::Io, path.string() + ": embedding size " + std::to_string(info.embedding_dim) +
                                    " out of range 1.." + std::to_string(kMaxEmbeddingDim)};
  return Ok{};
}

Error batch_ended() { return Error{ErrorKind::Input, "the write batch has already ended"}; }

}  // namespace

GalleryStore::GalleryStore(std::unique_ptr<GalleryBackend> backend) : backend_(std::move(backend)) {}
GalleryStore::GalleryStore(GalleryStore&&) noexcept = default;
GalleryStore& GalleryStore::operator=(GalleryStore&&) noexcept = default;
GalleryStore::~GalleryStore() = default;

const std::filesystem::path& GalleryStore::path() const { return backend_->path(); }

bool GalleryStore::remote() const { return backend_->remote(); }

Result<GalleryStore> GalleryStore::create(const std::filesystem::path& path, const ModelFingerprint& model, int dim) {
  if (dim < 1 || dim > kMaxEmbeddingDim)
    return Error{ErrorKind::Input,
                 "embedding size " + std::to_string(dim) + " out of range 1.." + std::to_string(kMaxEmbeddingDim)};
  if (model.sha256.size() != 64) return Error{ErrorKind::Input, "model fingerprint must be 64 hex digits"};
  if (is_postgres_location(path.string())) {
    Result<std::unique_ptr<GalleryBackend>> created = create_postgres(path.string(), model, dim);
    if (!created) return created.error();
    return GalleryStore(std::move(created.value()));
  }
  Result<std::unique_ptr<SqliteStore>> created = SqliteStore::create(path, model, dim);
  if (!created) return created.error();
  return GalleryStore(std::move(created.value()));
}

Result<GalleryStore> GalleryStore::open(const std::filesystem::path& path, Access access, int busy_timeout_ms) {
  std::unique_ptr<GalleryBackend> backend;
  if (is_postgres_location(path.string())) {
    Result<std::unique_ptr<GalleryBackend>> connected = connect_postgres(path.string());
    if (!connected) return connected.error();
    backend = std::move(connected.value());
  } else {
    Result<std::unique_ptr<SqliteStore>> connected = SqliteStore::open(path, access, busy_timeout_ms);
    if (!connected) return connected.error();
    backend = std::move(connected.value());
  }
  Result<GalleryInfo> info = backend->info();
  if (!info) return info.error();
  if (Status s = check_schema(backend->path(), info.value()); !s) return s.error();
  if (Status s = backend->opened(info.value(), access); !s) return s.error();
  return GalleryStore(std::move(backend));
}

Result<GalleryInfo> GalleryStore::info() const { return backend_->info(); }

Result<std::int64_t> GalleryStore::revision() const { return backend_->revision(); }

Status GalleryStore::check_model(const ModelFingerprint& model) const {
  Result<GalleryInfo> info = backend_->info();
  if (!info) return info.error();
  if (info.value().model_fingerprint != model.sha256)
    return Error{ErrorKind::Input, path().string() + ": made with another model (gallery model " +
                                       info.value().model + " " + info.value().model_fingerprint.substr(0, 12) +
                                       ", this bundle " + model.model + " " + model.sha256.substr(0, 12) +
                                       "); embeddings of different models are not comparable"};
  return Ok{};
}

Result<GalleryStore::ReadSnapshot> GalleryStore::read_snapshot() const {
  Result<bool> started = backend_->begin_read();
  if (!started) return started.error();
  return ReadSnapshot(started.value() ? backend_.get() : nullptr);  // null: already inside one
}

GalleryStore::ReadSnapshot::ReadSnapshot(ReadSnapshot&& other) noexcept
    : backend_(std::exchange(other.backend_, nullptr)) {}

GalleryStore::ReadSnapshot::~ReadSnapshot() {
  if (backend_) backend_->rollback();  // it wrote nothing
}

Result<GalleryStore::WriteBatch> GalleryStore::begin_write() {
  if (Status s = backend_->begin_write(); !s) return s.error();
  return WriteBatch(backend_.get());
}

GalleryStore::WriteBatch::WriteBatch(WriteBatch&& other) noexcept : backend_(std::exchange(other.backend_, nullptr)) {}

GalleryStore::WriteBatch::~WriteBatch() {
  if (backend_) backend_->rollback();
}

void GalleryStore::WriteBatch::abandon() {
  // Some rows may be in: a batch that failed half-way keeps nothing, so a caller cannot commit it.
  std::exchange(backend_, nullptr)->rollback();
}

Status GalleryStore::WriteBatch::commit() {
  if (!backend_) return batch_ended();
  return std::exchange(backend_, nullptr)->commit();
}

Result<Enrolled> GalleryStore::WriteBatch::enroll(const std::string& name, const std::string& metadata,
                                                  std::span<const NewTemplate> templates) {
  if (!backend_) return batch_ended();
  const std::string& file = backend_->path().string();
  if (Status s = check_identity_name(name); !s) return s.error();
  Result<std::string> meta = canonical_metadata(metadata);
  if (!meta) return meta.error();
  std::vector<std::vector<float>> units;
  std::vector<double> norms;
  for (const NewTemplate& t : templates) {
    const std::string from =
        file + ": embedding from " + (t.source.empty() ? std::string("(no source)") : printable_source(t.source));
    Result<StoredEmbedding> stored = unit_embedding(t.embedding, t.norm, backend_->dim(), from);
    if (!stored) return stored.error();
    units.push_back(std::move(stored.value().unit));
    norms.push_back(stored.value().norm);
  }
  Result<Enrolled> written = backend_->write_identity(name, meta.value(), templates, units, norms);
  if (!written) abandon();
  return written;
}

Status GalleryStore::WriteBatch::copy_identity(const IdentityRow& identity, std::span<const TemplateRow> templates) {
  if (!backend_) return batch_ended();
  const auto dim = static_cast<std::size_t>(backend_->dim());
  for (const TemplateRow& t : templates)
    if (t.embedding.size() != dim)
      return Error{ErrorKind::Input, backend_->path().string() + ": template " + std::to_string(t.id) + " has " +
                                         std::to_string(t.embedding.size()) + " values, the gallery holds " +
                                         std::to_string(dim)};
  Status copied = backend_->copy_identity(identity, templates);
  if (!copied) abandon();
  return copied;
}

Result<std::size_t> GalleryStore::WriteBatch::remove_unknown_faces(std::span<const std::int64_t> ids) {
  if (!backend_) return batch_ended();
  return backend_->remove_unknown_faces(ids);
}

Result<std::int64_t> GalleryStore::enroll(const std::string& name, const std::string& metadata,
                                          std::span<const NewTemplate> templates) {
  Result<WriteBatch> batch = begin_write();
  if (!batch) return batch.error();
  Result<Enrolled> enrolled = batch.value().enroll(name, metadata, templates);
  if (!enrolled) return enrolled.error();
  if (Status s = batch.value().commit(); !s) return s.error();
  return enrolled.value().identity;
}

Result<bool> GalleryStore::remove(const std::string& name) {
  Result<WriteBatch> batch = begin_write();
  if (!batch) return batch.error();
  Result<bool> removed = backend_->remove_identity(name);
  if (!removed) return removed.error();
  if (Status s = batch.value().commit(); !s) return s.error();  // no change: revision kept
  return removed.value();
}

Result<bool> GalleryStore::rename(const std::string& from, const std::string& to) {
  if (Status s = check_identity_name(to); !s) return s.error();
  Result<WriteBatch> batch = begin_write();
  if (!batch) return batch.error();
  // Checked inside the write: nobody takes the name between the check and the rename.
  Result<std::vector<IdentityRow>> ids = backend_->identities();
  if (!ids) return ids.error();
  for (const IdentityRow& row : ids.value())
    if (row.name == to && from != to)
      return Error{ErrorKind::Input, backend_->path().string() + ": an identity named \"" + to +
                                         "\" exists already; nothing renamed"};
  Result<bool> renamed = backend_->rename_identity(from, to);
  if (!renamed) return renamed.error();
  if (Status s = batch.value().commit(); !s) return s.error();
  return renamed.value();
}

Result<bool> GalleryStore::remove_template(std::int64_t template_id) {
  Result<WriteBatch> batch = begin_write();
  if (!batch) return batch.error();
  Result<bool> removed = backend_->remove_template(template_id);
  if (!removed) return removed.error();
  if (Status s = batch.value().commit(); !s) return s.error();
  return removed.value();
}

Status GalleryStore::listen_for_changes() { return backend_->listen_for_changes(); }

int GalleryStore::change_socket() const { return backend_->change_socket(); }

Result<bool> GalleryStore::changes_notified() { return backend_->changes_notified(); }

Result<std::int64_t> GalleryStore::add_unknown_face(const NewUnknownFace& face, const UnknownRetention& keep) {
  const std::string& gallery = backend_->path().string();
  if (Status s = check_retention(keep, gallery); !s) return s.error();
  Result<StoredUnknownFace> stored = check_unknown_face(face, backend_->dim(), gallery);
  if (!stored) return stored.error();
  Result<WriteBatch> batch = begin_write();
  if (!batch) return batch.error();
  Result<std::int64_t> id = backend_->add_unknown_face(stored.value(), keep);
  if (!id) return id.error();  // the batch rolls back
  if (Status s = batch.value().commit(); !s) return s.error();
  return id.value();
}

Result<std::vector<UnknownFaceRow>> GalleryStore::unknown_faces(bool with_embeddings, bool with_jpeg) const {
  return backend_->unknown_faces(with_embeddings, with_jpeg);
}

Result<std::size_t> GalleryStore::unknown_face_count() const { return backend_->unknown_face_count(); }

Result<std::vector<std::vector<unsigned char>>> GalleryStore::unknown_face_pictures(
    std::span<const std::int64_t> ids) const {
  return backend_->unknown_face_pictures(ids);
}

Result<std::size_t> GalleryStore::remove_unknown_faces(std::span<const std::int64_t> ids) {
  Result<WriteBatch> batch = begin_write();
  if (!batch) return batch.error();
  Result<std::size_t> removed = batch.value().remove_unknown_faces(ids);
  if (!removed) return removed.error();
  if (Status s = batch.value().commit(); !s) return s.error();
  return removed.value();
}

Result<std::size_t> GalleryStore::remove_unknown_faces_stored_before(std::int64_t cutoff_unix) {
  Result<WriteBatch> batch = begin_write();
  if (!batch) return batch.error();
  Result<std::size_t> removed = backend_->remove_unknown_faces_stored_before(cutoff_unix);
  if (!removed) return removed.error();
  if (Status s = batch.value().commit(); !s) return s.error();
  return removed.value();
}

Result<std::vector<IdentityRow>> GalleryStore::identities() const { return backend_->identities(); }

Result<std::vector<TemplateRow>> GalleryStore::templates(bool with_embeddings) const {
  return backend_->templates(with_embeddings);
}

}  // namespace taconite::gallery

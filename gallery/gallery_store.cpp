#include "gallery_store.hpp"

#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>

namespace taconite::gallery {

namespace {

// "TACG": marks the file as a taconite gallery (PRAGMA application_id).
constexpr int kApplicationId = 0x54414347;

constexpr const char* kSchema = R"sql(
CREATE TABLE gallery(
  key INTEGER PRIMARY KEY CHECK (key = 1),
  schema_version INTEGER NOT NULL,
  embedding_dim INTEGER NOT NULL,
  model_fingerprint TEXT NOT NULL,
  model TEXT NOT NULL,
  created_unix INTEGER NOT NULL,
  revision INTEGER NOT NULL);
CREATE TABLE identities(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  metadata TEXT NOT NULL DEFAULT '{}',
  created_unix INTEGER NOT NULL);
CREATE TABLE templates(
  id INTEGER PRIMARY KEY,
  identity_id INTEGER NOT NULL REFERENCES identities(id) ON DELETE CASCADE,
  embedding BLOB NOT NULL,
  norm REAL NOT NULL,
  source TEXT NOT NULL,
  created_unix INTEGER NOT NULL);
CREATE INDEX templates_by_identity ON templates(identity_id);
)sql";

std::int64_t now_unix() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct StatementDeleter {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

const char* column_text(sqlite3_stmt* s, int column) {
  const unsigned char* text = sqlite3_column_text(s, column);
  return text ? reinterpret_cast<const char*>(text) : "";
}

}  // namespace

struct GalleryStore::Impl {
  std::filesystem::path path;
  sqlite3* db = nullptr;
  int dim = 0;

  ~Impl() {
    // A writer leaves an empty WAL behind (best effort: it waits busy_timeout for readers). A
    // reader keeps the file's WAL alive after we close, and a gallery replaced with `mv new.db
    // people.db` would otherwise be read through the old file's WAL frames: old pages on the new
    // file (SQLite pairs a database with its -wal by name only).
    if (db && sqlite3_db_readonly(db, "main") == 0)
      sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
    if (db) sqlite3_close_v2(db);
  }

  // An error naming the file and what SQLite said, with a hint for the common cases.
  Error error(const std::string& what, int code) const {
    std::string message = path.string() + ": " + what + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(code));
    switch (code & 0xff) {
      case SQLITE_NOTADB:
      case SQLITE_CORRUPT: message += " (the file is corrupt or not a taconite gallery)"; break;
      case SQLITE_BUSY:
      case SQLITE_LOCKED: message += " (another process holds the gallery's write lock; try again)"; break;
      case SQLITE_READONLY: message += " (the file or its directory is read-only)"; break;
      default: break;
    }
    return Error{ErrorKind::Io, message};
  }

  Result<Statement> prepare(const char* sql) const {
    sqlite3_stmt* s = nullptr;
    const int rc = sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
    if (rc != SQLITE_OK) return error("cannot read the gallery", rc);
    return Statement(s);
  }

  Status exec(const char* sql, const char* what) const {
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return error(what, rc);
    return Ok{};
  }

  Result<std::int64_t> single_int(const char* sql) const {
    Result<Statement> s = prepare(sql);
    if (!s) return s.error();
    const int rc = sqlite3_step(s.value().get());
    if (rc != SQLITE_ROW) return error("cannot read the gallery", rc);
    return static_cast<std::int64_t>(sqlite3_column_int64(s.value().get(), 0));
  }
};

namespace {

// Opens the connection; the file must exist unless `create`.
Result<std::unique_ptr<GalleryStore::Impl>> connect(const std::filesystem::path& path, bool writable, bool create,
                                                    int busy_timeout_ms) {
  auto impl = std::make_unique<GalleryStore::Impl>();
  impl->path = path;
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (create && exists) return Error{ErrorKind::Input, path.string() + ": already exists (not overwritten)"};
  if (!create && !exists) return Error{ErrorKind::Io, path.string() + ": no such gallery file"};
  if (!create && !std::filesystem::is_regular_file(path, ec))
    return Error{ErrorKind::Io, path.string() + ": not a regular file"};
  int flags = writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
  if (create) flags |= SQLITE_OPEN_CREATE;
  // Each store has its own connection and is used by one thread at a time.
  flags |= SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &impl->db, flags, nullptr);
  if (rc != SQLITE_OK) return impl->error("cannot open", rc);
  sqlite3_extended_result_codes(impl->db, 1);
  sqlite3_busy_timeout(impl->db, busy_timeout_ms);
  if (Status s = impl->exec("PRAGMA foreign_keys = ON", "cannot configure"); !s) return s.error();
  return impl;
}

Result<GalleryInfo> read_info(const GalleryStore::Impl& impl) {
  // application_id reads the header: a non-SQLite file fails here with SQLITE_NOTADB.
  Result<std::int64_t> app = impl.single_int("PRAGMA application_id");
  if (!app) return app.error();
  if (app.value() != kApplicationId)
    return Error{ErrorKind::Io, impl.path.string() + ": an SQLite file but not a taconite gallery (application_id " +
                                    std::to_string(app.value()) + ", expected " + std::to_string(kApplicationId) + ")"};
  Result<Statement> s = impl.prepare(
      "SELECT schema_version, embedding_dim, model_fingerprint, model, created_unix, revision,"
      " (SELECT count(*) FROM identities), (SELECT count(*) FROM templates) FROM gallery WHERE key = 1");
  if (!s) return s.error();
  sqlite3_stmt* st = s.value().get();
  const int rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) {
    if (rc == SQLITE_DONE) return Error{ErrorKind::Io, impl.path.string() + ": the gallery record is missing"};
    return impl.error("cannot read the gallery record", rc);
  }
  GalleryInfo info;
  info.schema_version = sqlite3_column_int(st, 0);
  info.embedding_dim = sqlite3_column_int(st, 1);
  info.model_fingerprint = column_text(st, 2);
  info.model = column_text(st, 3);
  info.created_unix = sqlite3_column_int64(st, 4);
  info.revision = sqlite3_column_int64(st, 5);
  info.identities = sqlite3_column_int64(st, 6);
  info.templates = sqlite3_column_int64(st, 7);
  return info;
}

// The schema check of open(): the right version and a sane embedding size.
Status check_schema(const GalleryStore::Impl& impl, const GalleryInfo& info) {
  if (info.schema_version != kSchemaVersion)
    return Error{ErrorKind::Io, impl.path.string() + ": gallery schema version " + std::to_string(info.schema_version) +
                                    ", this program reads version " + std::to_string(kSchemaVersion)};
  if (info.embedding_dim < 1 || info.embedding_dim > kMaxEmbeddingDim)
    return Error{ErrorKind::Io, impl.path.string() + ": embedding size " + std::to_string(info.embedding_dim) +
                                    " out of range 1.." + std::to_string(kMaxEmbeddingDim)};
  return Ok{};
}

// Commits on success, rolls back otherwise.
class Transaction {
 public:
  explicit Transaction(const GalleryStore::Impl& impl) : impl_(impl) {}
  Status begin() {
    // IMMEDIATE takes the write lock now, so a busy gallery fails before any work.
    Status s = impl_.exec("BEGIN IMMEDIATE", "cannot start a write");
    open_ = s.ok();
    return s;
  }
  Status commit() {
    if (Status s = impl_.exec("UPDATE gallery SET revision = revision + 1 WHERE key = 1", "cannot write"); !s) return s;
    Status s = impl_.exec("COMMIT", "cannot commit");
    open_ = !s.ok();
    return s;
  }
  ~Transaction() {
    if (open_) sqlite3_exec(impl_.db, "ROLLBACK", nullptr, nullptr, nullptr);
  }

 private:
  const GalleryStore::Impl& impl_;
  bool open_ = false;
};

}  // namespace

GalleryStore::GalleryStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GalleryStore::GalleryStore(GalleryStore&&) noexcept = default;
GalleryStore& GalleryStore::operator=(GalleryStore&&) noexcept = default;
GalleryStore::~GalleryStore() = default;

const std::filesystem::path& GalleryStore::path() const { return impl_->path; }

Result<GalleryStore> GalleryStore::create(const std::filesystem::path& path, const ModelFingerprint& model, int dim) {
  if (dim < 1 || dim > kMaxEmbeddingDim)
    return Error{ErrorKind::Input,
                 "embedding size " + std::to_string(dim) + " out of range 1.." + std::to_string(kMaxEmbeddingDim)};
  if (model.sha256.size() != 64) return Error{ErrorKind::Input, "model fingerprint must be 64 hex digits"};
  Result<std::unique_ptr<Impl>> connected = connect(path, true, true, 5000);
  if (!connected) return connected.error();
  std::unique_ptr<Impl> impl = std::move(connected.value());
  impl->dim = dim;
  const std::string setup = "PRAGMA application_id = " + std::to_string(kApplicationId) +
                            "; PRAGMA user_version = " + std::to_string(kSchemaVersion) +
                            "; PRAGMA journal_mode = WAL;";
  if (Status s = impl->exec(setup.c_str(), "cannot initialise"); !s) return s.error();
  Transaction tx(*impl);
  if (Status s = tx.begin(); !s) return s.error();
  if (Status s = impl->exec(kSchema, "cannot create the tables"); !s) return s.error();
  Result<Statement> insert = impl->prepare(
      "INSERT INTO gallery(key, schema_version, embedding_dim, model_fingerprint, model, created_unix, revision)"
      " VALUES (1, ?, ?, ?, ?, ?, 0)");
  if (!insert) return insert.error();
  sqlite3_stmt* st = insert.value().get();
  sqlite3_bind_int(st, 1, kSchemaVersion);
  sqlite3_bind_int(st, 2, dim);
  sqlite3_bind_text(st, 3, model.sha256.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 4, model.model.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 5, now_unix());
  if (const int rc = sqlite3_step(st); rc != SQLITE_DONE) return impl->error("cannot write the gallery record", rc);
  if (Status s = tx.commit(); !s) return s.error();
  return GalleryStore(std::move(impl));
}

Result<GalleryStore> GalleryStore::open(const std::filesystem::path& path, Access access, int busy_timeout_ms) {
  Result<std::unique_ptr<Impl>> connected = connect(path, access == Access::ReadWrite, false, busy_timeout_ms);
  if (!connected) return connected.error();
  std::unique_ptr<Impl> impl = std::move(connected.value());
  Result<GalleryInfo> info = read_info(*impl);
  if (!info) return info.error();
  if (Status s = check_schema(*impl, info.value()); !s) return s.error();
  impl->dim = info.value().embedding_dim;
  return GalleryStore(std::move(impl));
}

Result<GalleryInfo> GalleryStore::info() const { return read_info(*impl_); }

Result<std::int64_t> GalleryStore::revision() const {
  return impl_->single_int("SELECT revision FROM gallery WHERE key = 1");
}

Status GalleryStore::check_model(const ModelFingerprint& model) const {
  Result<GalleryInfo> info = read_info(*impl_);
  if (!info) return info.error();
  if (info.value().model_fingerprint != model.sha256)
    return Error{ErrorKind::Input, impl_->path.string() + ": made with another model (gallery model " +
                                       info.value().model + " " + info.value().model_fingerprint.substr(0, 12) +
                                       ", this bundle " + model.model + " " + model.sha256.substr(0, 12) +
                                       "); embeddings of different models are not comparable"};
  return Ok{};
}

Result<std::int64_t> GalleryStore::enroll(const std::string& name, const std::string& metadata,
                                          std::span<const NewTemplate> templates) {
  const std::string& file = impl_->path.string();
  if (name.empty() || name.size() > kMaxNameBytes)
    return Error{ErrorKind::Input, "identity name must be 1.." + std::to_string(kMaxNameBytes) + " bytes"};
  if (metadata.size() > kMaxMetadataBytes)
    return Error{ErrorKind::Input, "metadata of " + std::to_string(metadata.size()) + " bytes, at most " +
                                       std::to_string(kMaxMetadataBytes)};
  std::vector<std::vector<float>> units;
  for (const NewTemplate& t : templates) {
    if (static_cast<int>(t.embedding.size()) != impl_->dim)
      return Error{ErrorKind::Input, file + ": embedding of " + std::to_string(t.embedding.size()) +
                                         " values, the gallery holds " + std::to_string(impl_->dim)};
    double sum = 0.0;
    for (float v : t.embedding) sum += static_cast<double>(v) * v;
    if (!std::isfinite(sum) || sum <= 0.0)
      return Error{ErrorKind::Input, "embedding from " + t.source + " is zero or not finite"};
    const double norm = std::sqrt(sum);
    std::vector<float> unit(t.embedding.size());
    for (std::size_t i = 0; i < unit.size(); ++i) unit[i] = static_cast<float>(t.embedding[i] / norm);
    units.push_back(std::move(unit));
  }

  Transaction tx(*impl_);
  if (Status s = tx.begin(); !s) return s.error();
  Result<Statement> add = impl_->prepare(
      "INSERT INTO identities(name, metadata, created_unix) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING");
  if (!add) return add.error();
  sqlite3_bind_text(add.value().get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(add.value().get(), 2, metadata.empty() ? "{}" : metadata.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(add.value().get(), 3, now_unix());
  if (const int rc = sqlite3_step(add.value().get()); rc != SQLITE_DONE)
    return impl_->error("cannot add the identity", rc);
  Result<Statement> find = impl_->prepare("SELECT id FROM identities WHERE name = ?");
  if (!find) return find.error();
  sqlite3_bind_text(find.value().get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
  if (const int rc = sqlite3_step(find.value().get()); rc != SQLITE_ROW)
    return impl_->error("cannot find the identity", rc);
  const std::int64_t identity = sqlite3_column_int64(find.value().get(), 0);

  Result<Statement> insert = impl_->prepare(
      "INSERT INTO templates(identity_id, embedding, norm, source, created_unix) VALUES (?, ?, ?, ?, ?)");
  if (!insert) return insert.error();
  sqlite3_stmt* st = insert.value().get();
  for (std::size_t i = 0; i < templates.size(); ++i) {
    const NewTemplate& t = templates[i];
    double norm = t.norm;
    if (norm <= 0.0 || !std::isfinite(norm)) {
      double sum = 0.0;
      for (float v : t.embedding) sum += static_cast<double>(v) * v;
      norm = std::sqrt(sum);
    }
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, identity);
    sqlite3_bind_blob(st, 2, units[i].data(), static_cast<int>(units[i].size() * sizeof(float)), SQLITE_STATIC);
    sqlite3_bind_double(st, 3, norm);
    sqlite3_bind_text(st, 4, t.source.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 5, t.created_unix > 0 ? t.created_unix : now_unix());
    if (const int rc = sqlite3_step(st); rc != SQLITE_DONE) return impl_->error("cannot add a template", rc);
  }
  if (Status s = tx.commit(); !s) return s.error();
  return identity;
}

Result<bool> GalleryStore::remove(const std::string& name) {
  Transaction tx(*impl_);
  if (Status s = tx.begin(); !s) return s.error();
  Result<Statement> del = impl_->prepare("DELETE FROM identities WHERE name = ?");
  if (!del) return del.error();
  sqlite3_bind_text(del.value().get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
  if (const int rc = sqlite3_step(del.value().get()); rc != SQLITE_DONE) return impl_->error("cannot remove", rc);
  if (sqlite3_changes(impl_->db) == 0) return false;  // nothing changed: rolled back, revision kept
  if (Status s = tx.commit(); !s) return s.error();
  return true;
}

Result<std::vector<IdentityRow>> GalleryStore::identities() const {
  Result<Statement> s = impl_->prepare(
      "SELECT i.id, i.name, i.metadata, i.created_unix, (SELECT count(*) FROM templates t WHERE t.identity_id = i.id)"
      " FROM identities i ORDER BY i.name");
  if (!s) return s.error();
  std::vector<IdentityRow> rows;
  int rc;
  while ((rc = sqlite3_step(s.value().get())) == SQLITE_ROW) {
    sqlite3_stmt* st = s.value().get();
    rows.push_back({sqlite3_column_int64(st, 0), column_text(st, 1), column_text(st, 2), sqlite3_column_int64(st, 4),
                    sqlite3_column_int64(st, 3)});
  }
  if (rc != SQLITE_DONE) return impl_->error("cannot read the identities", rc);
  return rows;
}

Result<std::vector<TemplateRow>> GalleryStore::templates(bool with_embeddings) const {
  // Without embeddings the blobs are not even read (the persisted index already holds them).
  Result<Statement> s = impl_->prepare(
      with_embeddings ? "SELECT id, identity_id, norm, source, created_unix, embedding FROM templates ORDER BY id"
                      : "SELECT id, identity_id, norm, source, created_unix FROM templates ORDER BY id");
  if (!s) return s.error();
  sqlite3_stmt* st = s.value().get();
  const std::size_t bytes = static_cast<std::size_t>(impl_->dim) * sizeof(float);
  std::vector<TemplateRow> rows;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    TemplateRow row;
    row.id = sqlite3_column_int64(st, 0);
    row.identity_id = sqlite3_column_int64(st, 1);
    row.norm = sqlite3_column_double(st, 2);
    row.source = column_text(st, 3);
    row.created_unix = sqlite3_column_int64(st, 4);
    if (with_embeddings) {
      const void* blob = sqlite3_column_blob(st, 5);
      if (static_cast<std::size_t>(sqlite3_column_bytes(st, 5)) != bytes || !blob)
        return Error{ErrorKind::Io, impl_->path.string() + ": template " + std::to_string(row.id) + " holds " +
                                        std::to_string(sqlite3_column_bytes(st, 5)) + " bytes, expected " +
                                        std::to_string(bytes) + " (corrupt gallery)"};
      row.embedding.resize(static_cast<std::size_t>(impl_->dim));
      std::memcpy(row.embedding.data(), blob, bytes);
    }
    rows.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) return impl_->error("cannot read the templates", rc);
  return rows;
}

}  // namespace taconite::gallery

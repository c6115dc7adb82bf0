#include "gallery_store.hpp"

#include <libpq-fe.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <optional>
#include <utility>

#include "identity_fields.hpp"
#include "pg_store.hpp"
#include "store_impl.hpp"

namespace taconite::gallery {

namespace {

// "TACG": marks the file as a taconite gallery (PRAGMA application_id).
constexpr int kApplicationId = 0x54414347;

// AUTOINCREMENT (schema version 2): an id is never given again after its row is removed.
std::string identities_table(const char* name) {
  return std::string("CREATE TABLE ") + name +
         "(\n"
         "  id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
         "  name TEXT NOT NULL UNIQUE,\n"
         "  metadata TEXT NOT NULL DEFAULT '{}',\n"
         "  created_unix INTEGER NOT NULL);\n";
}

std::string templates_table(const char* name) {
  return std::string("CREATE TABLE ") + name +
         "(\n"
         "  id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
         "  identity_id INTEGER NOT NULL REFERENCES identities(id) ON DELETE CASCADE,\n"
         "  embedding BLOB NOT NULL,\n"
         "  norm REAL NOT NULL,\n"
         "  source TEXT NOT NULL,\n"
         "  created_unix INTEGER NOT NULL);\n";
}

constexpr const char* kTemplatesIndex = "CREATE INDEX templates_by_identity ON templates(identity_id);\n";

std::string schema() {
  return R"sql(
CREATE TABLE gallery(
  key INTEGER PRIMARY KEY CHECK (key = 1),
  schema_version INTEGER NOT NULL,
  embedding_dim INTEGER NOT NULL,
  model_fingerprint TEXT NOT NULL,
  model TEXT NOT NULL,
  created_unix INTEGER NOT NULL,
  revision INTEGER NOT NULL);
)sql" + identities_table("identities") +
         templates_table("templates") + kTemplatesIndex;
}

// Version 1 -> 2: the tables again with AUTOINCREMENT, rows and ids kept (SQLite cannot alter a
// key in place). sqlite_sequence starts from the largest id kept.
std::string migration_to_v2() {
  return identities_table("identities_v2") + templates_table("templates_v2") +
         "INSERT INTO identities_v2(id, name, metadata, created_unix)"
         " SELECT id, name, metadata, created_unix FROM identities;\n"
         "INSERT INTO templates_v2(id, identity_id, embedding, norm, source, created_unix)"
         " SELECT id, identity_id, embedding, norm, source, created_unix FROM templates;\n"
         "DROP TABLE templates;\n"
         "DROP TABLE identities;\n"
         "ALTER TABLE identities_v2 RENAME TO identities;\n"
         "ALTER TABLE templates_v2 RENAME TO templates;\n" +
         kTemplatesIndex +
         "UPDATE gallery SET schema_version = 2 WHERE key = 1;\n"
         "PRAGMA user_version = 2;\n";
}

}  // namespace

bool is_postgres_location(std::string_view location) {
  if (location.starts_with("postgresql://") || location.starts_with("postgres://")) return true;
  // A libpq key=value string: its first key is one of libpq's keywords (a file path holding '='
  // is far-fetched). The keywords are those of an empty string's parse (it reads no file).
  const std::size_t equals = location.find('=');
  if (equals == std::string_view::npos) return false;
  std::string_view key = location.substr(0, equals);
  while (!key.empty() && (key.front() == ' ' || key.front() == '\t')) key.remove_prefix(1);
  while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
  PQconninfoOption* keywords = PQconninfoParse("", nullptr);
  bool known = false;
  for (PQconninfoOption* o = keywords; o && o->keyword; ++o) known = known || key == o->keyword;
  PQconninfoFree(keywords);
  return known;
}

namespace {

// Connects to a PostgreSQL gallery.
Result<std::unique_ptr<GalleryStore::Impl>> connect_postgres(const std::string& location) {
  Result<std::unique_ptr<PgStore>> pg = PgStore::connect(location);
  if (!pg) return pg.error();
  auto impl = std::make_unique<GalleryStore::Impl>();
  impl->path = pg.value()->name();
  impl->pg = std::move(pg.value());
  return impl;
}

// An SQLite URI opening `path` read-only and immutable (no lock, no -shm, no -wal).
std::string immutable_uri(const std::filesystem::path& path) {
  std::string uri = "file://";
  for (const char c : std::filesystem::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#') {
      static constexpr char kHex[] = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[static_cast<unsigned char>(c) >> 4];
      uri += kHex[c & 0xf];
    } else {
      uri += c;
    }
  }
  return uri + "?mode=ro&immutable=1";
}

// A gallery is in WAL mode: SQLite reads it through a -shm file it creates beside it, so a
// reader that cannot write the directory (a gallery shipped read-only, another user's directory)
// fails at its first read. When no -wal file holds writes it would miss, such a gallery is opened
// again immutable (`reopen_immutable`), which needs neither file; else the error says why.
Status read_where_not_writable(GalleryStore::Impl& impl, const std::function<int()>& reopen_immutable) {
  const int probe = sqlite3_exec(impl.db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
  if ((probe & 0xff) != SQLITE_READONLY && (probe & 0xff) != SQLITE_CANTOPEN) return Ok{};  // (read_info judges)
  const std::filesystem::path dir = impl.path.has_parent_path() ? impl.path.parent_path() : ".";
  if (::access(dir.c_str(), W_OK) == 0) return Ok{};  // not this case: read_info reports it
  const std::string wal = impl.path.string() + "-wal";
  std::error_code ec;
  if (const auto bytes = std::filesystem::file_size(wal, ec); !ec && bytes > 0)
    return Error{ErrorKind::Io, impl.path.string() + ": cannot be read: its directory is not writable for this user, "
                                "and SQLite must create " + impl.path.string() + "-shm there to read the writes "
                                "waiting in " + wal + " (WAL mode); make the directory writable, or let the "
                                "gallery's writers finish (a gallery closed by its last writer needs neither file)"};
  sqlite3_close_v2(impl.db);
  impl.db = nullptr;
  if (const int rc = reopen_immutable(); rc != SQLITE_OK) return impl.error("cannot open (read-only)", rc);
  return Ok{};
}

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
  const auto open = [&](const std::string& name, int how) {
    const int rc = sqlite3_open_v2(name.c_str(), &impl->db, how, nullptr);
    if (rc == SQLITE_OK) {
      sqlite3_extended_result_codes(impl->db, 1);
      sqlite3_busy_timeout(impl->db, busy_timeout_ms);
    }
    return rc;
  };
  if (const int rc = open(path.string(), flags); rc != SQLITE_OK) return impl->error("cannot open", rc);
  if (!writable && !create)
    if (Status s = read_where_not_writable(*impl, [&] { return open(immutable_uri(path), flags | SQLITE_OPEN_URI); });
        !s)
      return s.error();
  if (Status s = impl->exec("PRAGMA foreign_keys = ON", "cannot configure"); !s) return s.error();
  return impl;
}

Result<GalleryInfo> read_info(const GalleryStore::Impl& impl) {
  if (impl.pg) return impl.pg->info();
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

// The schema check of open(): a version this program reads and a sane embedding size.
Status check_schema(const GalleryStore::Impl& impl, const GalleryInfo& info) {
  if (info.schema_version < kOldestReadableSchemaVersion || info.schema_version > kSchemaVersion)
    return Error{ErrorKind::Io, impl.path.string() + ": gallery schema version " + std::to_string(info.schema_version) +
                                    ", this program reads versions " + std::to_string(kOldestReadableSchemaVersion) +
                                    ".." + std::to_string(kSchemaVersion)};
  if (info.embedding_dim < 1 || info.embedding_dim > kMaxEmbeddingDim)
    return Error{ErrorKind::Io, impl.path.string() + ": embedding size " + std::to_string(info.embedding_dim) +
                                    " out of range 1.." + std::to_string(kMaxEmbeddingDim)};
  return Ok{};
}

}  // namespace

GalleryStore::GalleryStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GalleryStore::GalleryStore(GalleryStore&&) noexcept = default;
GalleryStore& GalleryStore::operator=(GalleryStore&&) noexcept = default;
GalleryStore::~GalleryStore() = default;

const std::filesystem::path& GalleryStore::path() const { return impl_->path; }

bool GalleryStore::remote() const { return impl_->pg != nullptr; }

Result<GalleryStore::WriteBatch> GalleryStore::start_write(Impl& impl) {
  if (impl.pg) {
    if (Status s = impl.pg->begin_write(); !s) return s.error();
    return WriteBatch(&impl, 0);
  }
  // IMMEDIATE takes the write lock now, so a busy gallery fails before any work.
  if (Status s = impl.exec("BEGIN IMMEDIATE", "cannot start a write"); !s) return s.error();
  return WriteBatch(&impl, sqlite3_total_changes(impl.db));
}

// Rewrites a version 1 gallery as version 2 (see migration_to_v2). Foreign keys are off meanwhile:
// dropping the old identities table must not cascade into the templates being moved.
Status GalleryStore::migrate_to_v2(Impl& impl) {
  if (Status s = impl.exec("PRAGMA foreign_keys = OFF", "cannot configure"); !s) return s;
  Status migrated = [&]() -> Status {
    Result<WriteBatch> batch = start_write(impl);
    if (!batch) return batch.error();
    // Another process may have migrated it since open() read the version.
    Result<std::int64_t> version = impl.single_int("SELECT schema_version FROM gallery WHERE key = 1");
    if (!version) return version.error();
    if (version.value() != 1) return Ok{};
    if (Status s = impl.exec(migration_to_v2().c_str(), "cannot migrate the gallery to schema version 2"); !s)
      return s;
    if (Result<std::int64_t> broken = impl.single_int("SELECT count(*) FROM pragma_foreign_key_check"); !broken)
      return broken.error();
    else if (broken.value() != 0)
      return Error{ErrorKind::Io, impl.path.string() + ": " + std::to_string(broken.value()) +
                                      " template(s) of no identity; not migrated (corrupt gallery)"};
    return batch.value().commit();
  }();
  if (Status s = impl.exec("PRAGMA foreign_keys = ON", "cannot configure"); !s) return s;
  return migrated;
}


Result<GalleryStore> GalleryStore::create(const std::filesystem::path& path, const ModelFingerprint& model, int dim) {
  if (dim < 1 || dim > kMaxEmbeddingDim)
    return Error{ErrorKind::Input,
                 "embedding size " + std::to_string(dim) + " out of range 1.." + std::to_string(kMaxEmbeddingDim)};
  if (model.sha256.size() != 64) return Error{ErrorKind::Input, "model fingerprint must be 64 hex digits"};
  if (is_postgres_location(path.string())) {
    Result<std::unique_ptr<Impl>> connected = connect_postgres(path.string());
    if (!connected) return connected.error();
    if (Status s = connected.value()->pg->create_schema(model, dim); !s) return s.error();
    connected.value()->dim = dim;
    return GalleryStore(std::move(connected.value()));
  }
  Result<std::unique_ptr<Impl>> connected = connect(path, true, true, 5000);
  if (!connected) return connected.error();
  std::unique_ptr<Impl> impl = std::move(connected.value());
  impl->dim = dim;
  const std::string setup = "PRAGMA application_id = " + std::to_string(kApplicationId) +
                            "; PRAGMA user_version = " + std::to_string(kSchemaVersion) +
                            "; PRAGMA journal_mode = WAL;";
  if (Status s = impl->exec(setup.c_str(), "cannot initialise"); !s) return s.error();
  Result<WriteBatch> batch = start_write(*impl);
  if (!batch) return batch.error();
  if (Status s = impl->exec((schema() + kSqliteUnknownFacesTable).c_str(), "cannot create the tables"); !s)
    return s.error();
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
  if (Status s = batch.value().commit(); !s) return s.error();
  return GalleryStore(std::move(impl));
}

Result<GalleryStore> GalleryStore::open(const std::filesystem::path& path, Access access, int busy_timeout_ms) {
  const bool postgres = is_postgres_location(path.string());
  Result<std::unique_ptr<Impl>> connected = postgres ? connect_postgres(path.string())
                                                     : connect(path, access == Access::ReadWrite, false, busy_timeout_ms);
  if (!connected) return connected.error();
  std::unique_ptr<Impl> impl = std::move(connected.value());
  Result<GalleryInfo> info = read_info(*impl);
  if (!info) return info.error();
  if (Status s = check_schema(*impl, info.value()); !s) return s.error();
  impl->dim = info.value().embedding_dim;
  // A writer migrates first: written as version 1, its ids could be reused.
  if (postgres && info.value().schema_version != kSchemaVersion)
    return Error{ErrorKind::Io, impl->path.string() + ": gallery schema version " +
                                    std::to_string(info.value().schema_version) + ", this program reads version " +
                                    std::to_string(kSchemaVersion) + " in PostgreSQL"};
  if (access == Access::ReadWrite && info.value().schema_version == 1)
    if (Status s = migrate_to_v2(*impl); !s) return s.error();
  if (access == Access::ReadWrite)
    if (Status s = add_unknown_faces_table_if_missing(*impl); !s) return s.error();
  return GalleryStore(std::move(impl));
}

Result<GalleryInfo> GalleryStore::info() const { return read_info(*impl_); }

Result<std::int64_t> GalleryStore::revision() const {
  if (impl_->pg) return impl_->pg->revision();
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

Result<GalleryStore::ReadSnapshot> GalleryStore::read_snapshot() const {
  if (impl_->pg) {
    if (impl_->pg->in_transaction()) return ReadSnapshot(nullptr);  // already inside one
    if (Status s = impl_->pg->begin_read(); !s) return s.error();
    return ReadSnapshot(impl_.get());  // REPEATABLE READ: the snapshot is the first statement's
  }
  if (!sqlite3_get_autocommit(impl_->db)) return ReadSnapshot(nullptr);  // already inside one
  if (Status s = impl_->exec("BEGIN", "cannot start a read"); !s) return s.error();
  ReadSnapshot snapshot(impl_.get());
  // A deferred transaction takes its snapshot at the first read: take it now.
  if (Result<std::int64_t> r = revision(); !r) return r.error();
  return snapshot;
}

GalleryStore::ReadSnapshot::ReadSnapshot(ReadSnapshot&& other) noexcept : impl_(std::exchange(other.impl_, nullptr)) {}

GalleryStore::ReadSnapshot::~ReadSnapshot() {
  if (impl_) impl_->rollback();  // it wrote nothing
}

Result<GalleryStore::WriteBatch> GalleryStore::begin_write() { return start_write(*impl_); }

GalleryStore::WriteBatch::WriteBatch(WriteBatch&& other) noexcept
    : impl_(std::exchange(other.impl_, nullptr)),
      changes_at_begin_(other.changes_at_begin_),
      unknown_changes_(other.unknown_changes_) {}

GalleryStore::WriteBatch::~WriteBatch() {
  if (impl_) impl_->rollback();
}

Status GalleryStore::WriteBatch::commit() {
  if (!impl_) return Error{ErrorKind::Input, "the write batch has already ended"};
  Impl* impl = std::exchange(impl_, nullptr);
  if (impl->pg) return impl->pg->commit();
  const int changes = sqlite3_total_changes(impl->db) - changes_at_begin_;
  if (changes == 0) {  // nothing written: revision kept
    sqlite3_exec(impl->db, "ROLLBACK", nullptr, nullptr, nullptr);
    return Ok{};
  }
  // Unknown faces are not what a pipeline searches: only identities and templates make a revision.
  Status s = changes > unknown_changes_
                 ? impl->exec("UPDATE gallery SET revision = revision + 1 WHERE key = 1", "cannot write")
                 : Status(Ok{});
  if (s) s = impl->exec("COMMIT", "cannot commit");
  if (!s) sqlite3_exec(impl->db, "ROLLBACK", nullptr, nullptr, nullptr);
  return s;
}

Result<Enrolled> GalleryStore::WriteBatch::enroll(const std::string& name, const std::string& metadata,
                                                  std::span<const NewTemplate> templates) {
  if (!impl_) return Error{ErrorKind::Input, "the write batch has already ended"};
  const std::string& file = impl_->path.string();
  if (Status s = check_identity_name(name); !s) return s.error();
  Result<std::string> meta = canonical_metadata(metadata);
  if (!meta) return meta.error();
  std::vector<std::vector<float>> units;
  std::vector<double> norms;
  for (const NewTemplate& t : templates) {
    const std::string from =
        file + ": embedding from " + (t.source.empty() ? std::string("(no source)") : printable_source(t.source));
    Result<StoredEmbedding> stored = unit_embedding(t.embedding, t.norm, impl_->dim, from);
    if (!stored) return stored.error();
    units.push_back(std::move(stored.value().unit));
    norms.push_back(stored.value().norm);
  }
  Result<Enrolled> written = write_identity(name, meta.value(), templates, units, norms);
  if (!written) {
    // Some rows may be in: a batch that failed half-way keeps nothing, so a caller cannot commit it.
    impl_->rollback();
    impl_ = nullptr;
  }
  return written;
}

Status GalleryStore::WriteBatch::copy_identity(const IdentityRow& identity, std::span<const TemplateRow> templates) {
  if (!impl_) return Error{ErrorKind::Input, "the write batch has already ended"};
  const std::size_t bytes = static_cast<std::size_t>(impl_->dim) * sizeof(float);
  for (const TemplateRow& t : templates)
    if (t.embedding.size() * sizeof(float) != bytes)
      return Error{ErrorKind::Input, impl_->path.string() + ": template " + std::to_string(t.id) + " has " +
                                         std::to_string(t.embedding.size()) + " values, the gallery holds " +
                                         std::to_string(impl_->dim)};
  Status copied = impl_->pg ? impl_->pg->copy_identity(identity, templates) : [&]() -> Status {
    Result<Statement> add =
        impl_->prepare("INSERT INTO identities(id, name, metadata, created_unix) VALUES (?, ?, ?, ?)");
    if (!add) return add.error();
    sqlite3_stmt* st = add.value().get();
    sqlite3_bind_int64(st, 1, identity.id);
    sqlite3_bind_text(st, 2, identity.name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, identity.metadata.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 4, identity.created_unix);
    if (const int rc = sqlite3_step(st); rc != SQLITE_DONE) return impl_->error("cannot copy an identity", rc);
    Result<Statement> insert = impl_->prepare(
        "INSERT INTO templates(id, identity_id, embedding, norm, source, created_unix) VALUES (?, ?, ?, ?, ?, ?)");
    if (!insert) return insert.error();
    for (const TemplateRow& t : templates) {
      sqlite3_stmt* row = insert.value().get();
      sqlite3_reset(row);
      sqlite3_bind_int64(row, 1, t.id);
      sqlite3_bind_int64(row, 2, t.identity_id);
      sqlite3_bind_blob(row, 3, t.embedding.data(), static_cast<int>(bytes), SQLITE_STATIC);
      sqlite3_bind_double(row, 4, t.norm);
      sqlite3_bind_text(row, 5, t.source.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(row, 6, t.created_unix);
      if (const int rc = sqlite3_step(row); rc != SQLITE_DONE) return impl_->error("cannot copy a template", rc);
    }
    return Ok{};
  }();
  if (!copied) {
    impl_->rollback();
    impl_ = nullptr;
  }
  return copied;
}

Result<Enrolled> GalleryStore::WriteBatch::write_identity(const std::string& name, const std::string& metadata,
                                                          std::span<const NewTemplate> templates,
                                                          const std::vector<std::vector<float>>& units,
                                                          std::span<const double> norms) {
  if (impl_->pg) return impl_->pg->write_identity(name, metadata, templates, units, norms);
  Result<Statement> add = impl_->prepare(
      "INSERT INTO identities(name, metadata, created_unix) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING");
  if (!add) return add.error();
  sqlite3_bind_text(add.value().get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(add.value().get(), 2, metadata.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(add.value().get(), 3, now_unix());
  if (const int rc = sqlite3_step(add.value().get()); rc != SQLITE_DONE)
    return impl_->error("cannot add the identity", rc);
  Result<Statement> find = impl_->prepare("SELECT id FROM identities WHERE name = ?");
  if (!find) return find.error();
  sqlite3_bind_text(find.value().get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
  if (const int rc = sqlite3_step(find.value().get()); rc != SQLITE_ROW)
    return impl_->error("cannot find the identity", rc);
  Enrolled result;
  result.identity = sqlite3_column_int64(find.value().get(), 0);

  Result<Statement> present =
      impl_->prepare("SELECT 1 FROM templates WHERE identity_id = ? AND embedding = ? LIMIT 1");
  if (!present) return present.error();
  Result<Statement> insert = impl_->prepare(
      "INSERT INTO templates(identity_id, embedding, norm, source, created_unix) VALUES (?, ?, ?, ?, ?)");
  if (!insert) return insert.error();
  for (std::size_t i = 0; i < templates.size(); ++i) {
    const NewTemplate& t = templates[i];
    const int blob_bytes = static_cast<int>(units[i].size() * sizeof(float));
    sqlite3_stmt* check = present.value().get();
    sqlite3_reset(check);
    sqlite3_bind_int64(check, 1, result.identity);
    sqlite3_bind_blob(check, 2, units[i].data(), blob_bytes, SQLITE_STATIC);
    const int found = sqlite3_step(check);
    if (found == SQLITE_ROW) {
      ++result.duplicates;
      continue;
    }
    if (found != SQLITE_DONE) return impl_->error("cannot read the templates", found);
    sqlite3_stmt* st = insert.value().get();
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, result.identity);
    sqlite3_bind_blob(st, 2, units[i].data(), blob_bytes, SQLITE_STATIC);
    sqlite3_bind_double(st, 3, norms[i]);
    sqlite3_bind_text(st, 4, printable_source(t.source).c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 5, t.created_unix > 0 ? t.created_unix : now_unix());
    if (const int rc = sqlite3_step(st); rc != SQLITE_DONE) return impl_->error("cannot add a template", rc);
    ++result.added;
  }
  return result;
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
  if (impl_->pg) {
    Result<bool> removed = impl_->pg->remove(name);
    if (!removed) return removed.error();
    if (Status s = batch.value().commit(); !s) return s.error();
    return removed.value();
  }
  Result<Statement> del = impl_->prepare("DELETE FROM identities WHERE name = ?");
  if (!del) return del.error();
  sqlite3_bind_text(del.value().get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
  if (const int rc = sqlite3_step(del.value().get()); rc != SQLITE_DONE) return impl_->error("cannot remove", rc);
  const bool removed = sqlite3_changes(impl_->db) > 0;
  if (Status s = batch.value().commit(); !s) return s.error();  // no change: revision kept
  return removed;
}

Status GalleryStore::listen_for_changes() {
  if (!impl_->pg) return Error{ErrorKind::Input, impl_->path.string() + ": change notification needs a PostgreSQL gallery"};
  return impl_->pg->listen();
}

int GalleryStore::change_socket() const { return impl_->pg ? impl_->pg->socket() : -1; }

Result<bool> GalleryStore::changes_notified() {
  if (!impl_->pg) return false;
  return impl_->pg->take_notifications();
}

Result<std::vector<IdentityRow>> GalleryStore::identities() const {
  if (impl_->pg) return impl_->pg->identities();
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
  if (impl_->pg) return impl_->pg->templates(with_embeddings, impl_->dim);
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
      if (Status ok = check_stored_embedding(blob, static_cast<std::size_t>(sqlite3_column_bytes(st, 5)),
                                             impl_->dim, impl_->path.string(), "template", row.id);
          !ok)
        return ok.error();
      row.embedding.resize(static_cast<std::size_t>(impl_->dim));
      std::memcpy(row.embedding.data(), blob, bytes);
    }
    rows.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) return impl_->error("cannot read the templates", rc);
  return rows;
}

}  // namespace taconite::gallery

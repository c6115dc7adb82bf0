#include "sqlite_store.hpp"

#include <unistd.h>

#include <cstring>
#include <utility>

#include "identity_fields.hpp"
#include "unix_time.hpp"

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

}  // namespace

SqliteStore::~SqliteStore() {
  // A writer leaves an empty WAL behind (best effort: it waits busy_timeout for readers). A
  // reader keeps the file's WAL alive after we close, and a gallery replaced with `mv new.db
  // people.db` would otherwise be read through the old file's WAL frames: old pages on the new
  // file (SQLite pairs a database with its -wal by name only).
  if (db_ && sqlite3_db_readonly(db_, "main") == 0)
    sqlite3_exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
  if (db_) sqlite3_close_v2(db_);
}

Error SqliteStore::error(const std::string& what, int code) const {
  std::string message = path_.string() + ": " + what + ": " + (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(code));
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

Result<Statement> SqliteStore::prepare(const char* sql) const {
  sqlite3_stmt* s = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql, -1, &s, nullptr);
  if (rc != SQLITE_OK) return error("cannot read the gallery", rc);
  return Statement(s);
}

Status SqliteStore::exec(const char* sql, const char* what) const {
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return error(what, rc);
  return Ok{};
}

Result<std::int64_t> SqliteStore::single_int(const char* sql) const {
  Result<Statement> s = prepare(sql);
  if (!s) return s.error();
  const int rc = sqlite3_step(s.value().get());
  if (rc != SQLITE_ROW) return error("cannot read the gallery", rc);
  return static_cast<std::int64_t>(sqlite3_column_int64(s.value().get(), 0));
}

// A gallery is in WAL mode: SQLite reads it through a -shm file it creates beside it, so a
// reader that cannot write the directory (a gallery shipped read-only, another user's directory)
// fails at its first read. When no -wal file holds writes it would miss, such a gallery is opened
// again immutable (`reopen_immutable`), which needs neither file; else the error says why.
Status SqliteStore::read_where_not_writable(const std::function<int()>& reopen_immutable) {
  const int probe = sqlite3_exec(db_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
  if ((probe & 0xff) != SQLITE_READONLY && (probe & 0xff) != SQLITE_CANTOPEN) return Ok{};  // (info() judges)
  const std::filesystem::path dir = path_.has_parent_path() ? path_.parent_path() : ".";
  if (::access(dir.c_str(), W_OK) == 0) return Ok{};  // not this case: info() reports it
  const std::string wal = path_.string() + "-wal";
  std::error_code ec;
  if (const auto bytes = std::filesystem::file_size(wal, ec); !ec && bytes > 0)
    return Error{ErrorKind::Io, path_.string() + ": cannot be read: its directory is not writable for this user, "
                                "and SQLite must create " + path_.string() + "-shm there to read the writes "
                                "waiting in " + wal + " (WAL mode); make the directory writable, or let the "
                                "gallery's writers finish (a gallery closed by its last writer needs neither file)"};
  sqlite3_close_v2(db_);
  db_ = nullptr;
  if (const int rc = reopen_immutable(); rc != SQLITE_OK) return error("cannot open (read-only)", rc);
  return Ok{};
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::connect(const std::filesystem::path& path, bool writable,
                                                          bool create, int busy_timeout_ms) {
  std::unique_ptr<SqliteStore> store(new SqliteStore(path));
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
  sqlite3*& db = store->db_;
  const auto open = [&](const std::string& name, int how) {
    const int rc = sqlite3_open_v2(name.c_str(), &db, how, nullptr);
    if (rc == SQLITE_OK) {
      sqlite3_extended_result_codes(db, 1);
      sqlite3_busy_timeout(db, busy_timeout_ms);
    }
    return rc;
  };
  if (const int rc = open(path.string(), flags); rc != SQLITE_OK) return store->error("cannot open", rc);
  if (!writable && !create)
    if (Status s = store->read_where_not_writable([&] { return open(immutable_uri(path), flags | SQLITE_OPEN_URI); });
        !s)
      return s.error();
  if (Status s = store->exec("PRAGMA foreign_keys = ON", "cannot configure"); !s) return s.error();
  return store;
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::create(const std::filesystem::path& path,
                                                         const ModelFingerprint& model, int dim) {
  Result<std::unique_ptr<SqliteStore>> connected = connect(path, true, true, 5000);
  if (!connected) return connected.error();
  SqliteStore& store = *connected.value();
  store.dim_ = dim;
  const std::string setup = "PRAGMA application_id = " + std::to_string(kApplicationId) +
                            "; PRAGMA user_version = " + std::to_string(kSchemaVersion) +
                            "; PRAGMA journal_mode = WAL;";
  if (Status s = store.exec(setup.c_str(), "cannot initialise"); !s) return s.error();
  if (Status s = store.begin_write(); !s) return s.error();
  const auto fail = [&](Error e) -> Error {
    store.rollback();
    return e;
  };
  if (Status s = store.exec((schema() + kSqliteUnknownFacesTable).c_str(), "cannot create the tables"); !s)
    return fail(s.error());
  Result<Statement> insert = store.prepare(
      "INSERT INTO gallery(key, schema_version, embedding_dim, model_fingerprint, model, created_unix, revision)"
      " VALUES (1, ?, ?, ?, ?, ?, 0)");
  if (!insert) return fail(insert.error());
  sqlite3_stmt* st = insert.value().get();
  sqlite3_bind_int(st, 1, kSchemaVersion);
  sqlite3_bind_int(st, 2, dim);
  sqlite3_bind_text(st, 3, model.sha256.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 4, model.model.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 5, now_unix());
  if (const int rc = sqlite3_step(st); rc != SQLITE_DONE) return fail(store.error("cannot write the gallery record", rc));
  if (Status s = store.commit(); !s) return s.error();
  return connected;
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::filesystem::path& path,
                                                       GalleryStore::Access access, int busy_timeout_ms) {
  return connect(path, access == GalleryStore::Access::ReadWrite, false, busy_timeout_ms);
}

Result<GalleryInfo> SqliteStore::info() const {
  // application_id reads the header: a non-SQLite file fails here with SQLITE_NOTADB.
  Result<std::int64_t> app = single_int("PRAGMA application_id");
  if (!app) return app.error();
  if (app.value() != kApplicationId)
    return Error{ErrorKind::Io, path_.string() + ": an SQLite file but not a taconite gallery (application_id " +
                                    std::to_string(app.value()) + ", expected " + std::to_string(kApplicationId) + ")"};
  Result<Statement> s = prepare(
      "SELECT schema_version, embedding_dim, model_fingerprint, model, created_unix, revision,"
      " (SELECT count(*) FROM identities), (SELECT count(*) FROM templates) FROM gallery WHERE key = 1");
  if (!s) return s.error();
  sqlite3_stmt* st = s.value().get();
  const int rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) {
    if (rc == SQLITE_DONE) return Error{ErrorKind::Io, path_.string() + ": the gallery record is missing"};
    return error("cannot read the gallery record", rc);
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

Result<std::int64_t> SqliteStore::revision() const {
  return single_int("SELECT revision FROM gallery WHERE key = 1");
}

// A writer migrates first: written as version 1, its ids could be reused.
Status SqliteStore::opened(const GalleryInfo& info, GalleryStore::Access access) {
  dim_ = info.embedding_dim;
  if (access != GalleryStore::Access::ReadWrite) return Ok{};
  if (info.schema_version == 1)
    if (Status s = migrate_to_v2(); !s) return s;
  return add_unknown_faces_table_if_missing();
}

// Rewrites a version 1 gallery as version 2 (see migration_to_v2). Foreign keys are off meanwhile:
// dropping the old identities table must not cascade into the templates being moved.
Status SqliteStore::migrate_to_v2() {
  if (Status s = exec("PRAGMA foreign_keys = OFF", "cannot configure"); !s) return s;
  Status migrated = [&]() -> Status {
    if (Status s = begin_write(); !s) return s;
    Status done = [&]() -> Status {
      // Another process may have migrated it since open() read the version.
      Result<std::int64_t> version = single_int("SELECT schema_version FROM gallery WHERE key = 1");
      if (!version) return version.error();
      if (version.value() != 1) return Ok{};
      if (Status s = exec(migration_to_v2().c_str(), "cannot migrate the gallery to schema version 2"); !s) return s;
      if (Result<std::int64_t> broken = single_int("SELECT count(*) FROM pragma_foreign_key_check"); !broken)
        return broken.error();
      else if (broken.value() != 0)
        return Error{ErrorKind::Io, path_.string() + ": " + std::to_string(broken.value()) +
                                        " template(s) of no identity; not migrated (corrupt gallery)"};
      return commit();
    }();
    rollback();  // (after commit: nothing open, nothing done)
    return done;
  }();
  if (Status s = exec("PRAGMA foreign_keys = ON", "cannot configure"); !s) return s;
  return migrated;
}

Result<bool> SqliteStore::begin_read() {
  if (!sqlite3_get_autocommit(db_)) return false;  // already inside one
  if (Status s = exec("BEGIN", "cannot start a read"); !s) return s.error();
  // A deferred transaction takes its snapshot at the first read: take it now.
  if (Result<std::int64_t> r = revision(); !r) {
    rollback();
    return r.error();
  }
  return true;
}

Status SqliteStore::begin_write() {
  // IMMEDIATE takes the write lock now, so a busy gallery fails before any work.
  if (Status s = exec("BEGIN IMMEDIATE", "cannot start a write"); !s) return s;
  changes_at_begin_ = total_changes();
  unknown_changes_ = 0;
  return Ok{};
}

Status SqliteStore::commit() {
  const std::int64_t changes = total_changes() - changes_at_begin_;
  if (changes == 0) {  // nothing written: revision kept
    rollback();
    return Ok{};
  }
  // Unknown faces are not what a pipeline searches: only identities and templates make a revision.
  Status s = changes > unknown_changes_ ? exec("UPDATE gallery SET revision = revision + 1 WHERE key = 1", "cannot write")
                                        : Status(Ok{});
  if (s) s = exec("COMMIT", "cannot commit");
  if (!s) rollback();
  return s;
}

void SqliteStore::rollback() {
  if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Result<Enrolled> SqliteStore::write_identity(const std::string& name, const std::string& metadata,
                                             std::span<const NewTemplate> templates,
                                             const std::vector<std::vector<float>>& units,
                                             std::span<const double> norms) {
  Result<Statement> add =
      prepare("INSERT INTO identities(name, metadata, created_unix) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING");
  if (!add) return add.error();
  sqlite3_bind_text(add.value().get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(add.value().get(), 2, metadata.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(add.value().get(), 3, now_unix());
  if (const int rc = sqlite3_step(add.value().get()); rc != SQLITE_DONE) return error("cannot add the identity", rc);
  Result<Statement> find = prepare("SELECT id FROM identities WHERE name = ?");
  if (!find) return find.error();
  sqlite3_bind_text(find.value().get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
  if (const int rc = sqlite3_step(find.value().get()); rc != SQLITE_ROW) return error("cannot find the identity", rc);
  Enrolled result;
  result.identity = sqlite3_column_int64(find.value().get(), 0);

  Result<Statement> present = prepare("SELECT 1 FROM templates WHERE identity_id = ? AND embedding = ? LIMIT 1");
  if (!present) return present.error();
  Result<Statement> insert =
      prepare("INSERT INTO templates(identity_id, embedding, norm, source, created_unix) VALUES (?, ?, ?, ?, ?)");
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
    if (found != SQLITE_DONE) return error("cannot read the templates", found);
    sqlite3_stmt* st = insert.value().get();
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, result.identity);
    sqlite3_bind_blob(st, 2, units[i].data(), blob_bytes, SQLITE_STATIC);
    sqlite3_bind_double(st, 3, norms[i]);
    sqlite3_bind_text(st, 4, printable_source(t.source).c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 5, t.created_unix > 0 ? t.created_unix : now_unix());
    if (const int rc = sqlite3_step(st); rc != SQLITE_DONE) return error("cannot add a template", rc);
    ++result.added;
  }
  return result;
}

Status SqliteStore::copy_identity(const IdentityRow& identity, std::span<const TemplateRow> templates) {
  Result<Statement> add = prepare("INSERT INTO identities(id, name, metadata, created_unix) VALUES (?, ?, ?, ?)");
  if (!add) return add.error();
  sqlite3_stmt* st = add.value().get();
  sqlite3_bind_int64(st, 1, identity.id);
  sqlite3_bind_text(st, 2, identity.name.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 3, identity.metadata.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 4, identity.created_unix);
  if (const int rc = sqlite3_step(st); rc != SQLITE_DONE) return error("cannot copy an identity", rc);
  Result<Statement> insert = prepare(
      "INSERT INTO templates(id, identity_id, embedding, norm, source, created_unix) VALUES (?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.error();
  for (const TemplateRow& t : templates) {
    sqlite3_stmt* row = insert.value().get();
    sqlite3_reset(row);
    sqlite3_bind_int64(row, 1, t.id);
    sqlite3_bind_int64(row, 2, t.identity_id);
    sqlite3_bind_blob(row, 3, t.embedding.data(), static_cast<int>(t.embedding.size() * sizeof(float)), SQLITE_STATIC);
    sqlite3_bind_double(row, 4, t.norm);
    sqlite3_bind_text(row, 5, t.source.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(row, 6, t.created_unix);
    if (const int rc = sqlite3_step(row); rc != SQLITE_DONE) return error("cannot copy a template", rc);
  }
  return Ok{};
}

Result<bool> SqliteStore::remove_identity(const std::string& name) {
  Result<Statement> del = prepare("DELETE FROM identities WHERE name = ?");
  if (!del) return del.error();
  sqlite3_bind_text(del.value().get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
  if (const int rc = sqlite3_step(del.value().get()); rc != SQLITE_DONE) return error("cannot remove", rc);
  return sqlite3_changes(db_) > 0;
}

Result<bool> SqliteStore::rename_identity(const std::string& from, const std::string& to) {
  Result<Statement> update = prepare("UPDATE identities SET name = ? WHERE name = ?");
  if (!update) return update.error();
  sqlite3_bind_text(update.value().get(), 1, to.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(update.value().get(), 2, from.c_str(), -1, SQLITE_TRANSIENT);
  if (const int rc = sqlite3_step(update.value().get()); rc != SQLITE_DONE) return error("cannot rename", rc);
  return sqlite3_changes(db_) > 0;
}

Result<bool> SqliteStore::remove_template(std::int64_t id) {
  Result<Statement> del = prepare("DELETE FROM templates WHERE id = ?");
  if (!del) return del.error();
  sqlite3_bind_int64(del.value().get(), 1, id);
  if (const int rc = sqlite3_step(del.value().get()); rc != SQLITE_DONE) return error("cannot remove a template", rc);
  return sqlite3_changes(db_) > 0;
}

Status SqliteStore::listen_for_changes() {
  return Error{ErrorKind::Input, path_.string() + ": change notification needs a PostgreSQL gallery"};
}

Result<std::vector<IdentityRow>> SqliteStore::identities() const {
  Result<Statement> s = prepare(
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
  if (rc != SQLITE_DONE) return error("cannot read the identities", rc);
  return rows;
}

Result<std::vector<TemplateRow>> SqliteStore::templates(bool with_embeddings) const {
  // Without embeddings the blobs are not even read (the persisted index already holds them).
  Result<Statement> s =
      prepare(with_embeddings ? "SELECT id, identity_id, norm, source, created_unix, embedding FROM templates ORDER BY id"
                              : "SELECT id, identity_id, norm, source, created_unix FROM templates ORDER BY id");
  if (!s) return s.error();
  sqlite3_stmt* st = s.value().get();
  const std::size_t bytes = static_cast<std::size_t>(dim_) * sizeof(float);
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
      if (Status ok = check_stored_embedding(blob, static_cast<std::size_t>(sqlite3_column_bytes(st, 5)), dim_,
                                             path_.string(), "template", row.id);
          !ok)
        return ok.error();
      row.embedding.resize(static_cast<std::size_t>(dim_));
      std::memcpy(row.embedding.data(), blob, bytes);
    }
    rows.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) return error("cannot read the templates", rc);
  return rows;
}

}  // namespace taconite::gallery

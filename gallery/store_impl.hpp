// The private state of a GalleryStore (gallery_store.hpp), shared by the files that implement it:
// gallery_store.cpp (galleries, identities, templates) and unknown_faces.cpp (kept unknown faces).
// Private to the gallery library.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <string>

#include "gallery_store.hpp"
#include "pg_store.hpp"
#include "unix_time.hpp"

namespace taconite::gallery {

struct StatementDeleter {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

inline const char* column_text(sqlite3_stmt* s, int column) {
  const unsigned char* text = sqlite3_column_text(s, column);
  return text ? reinterpret_cast<const char*>(text) : "";
}

struct GalleryStore::Impl {
  std::filesystem::path path;
  sqlite3* db = nullptr;
  std::unique_ptr<PgStore> pg;  // set for a PostgreSQL gallery (then db is null)
  int dim = 0;

  // Ends the open transaction, keeping nothing it wrote.
  void rollback() const {
    if (pg)
      pg->rollback();
    else
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  }

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

// unknown_faces.cpp: the SQLite table of unknown faces (part of a new gallery), and what the
// first read-write open of an older gallery runs to add it.
extern const char* const kSqliteUnknownFacesTable;
Status add_unknown_faces_table_if_missing(GalleryStore::Impl& impl);

}  // namespace taconite::gallery

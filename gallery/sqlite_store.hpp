// The SQLite side of GalleryStore (gallery_store.hpp): the gallery in one file in WAL mode,
// tables `gallery` (one row: schema version, embedding size, model fingerprint, revision),
// `identities`, `templates` (the unit embedding as a blob of float32, its raw norm) and
// `unknown_faces` (sqlite_unknown_faces.cpp); ids are AUTOINCREMENT, never given again (schema
// version 2; a version 1 file is migrated by the first read-write open).
//
// A write is one IMMEDIATE transaction; commit bumps `revision` once when a row other than an
// unknown face changed. Every error names the file and what SQLite said, with a hint for the
// common cases. Private to the gallery library.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "gallery_backend.hpp"

namespace taconite::gallery {

struct StatementDeleter {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

class SqliteStore final : public GalleryBackend {
 public:
  // A new gallery file; Input error when it exists.
  static Result<std::unique_ptr<SqliteStore>> create(const std::filesystem::path& path, const ModelFingerprint& model,
                                                     int dim);
  // An existing gallery file; Io error when it is missing or not a regular file.
  static Result<std::unique_ptr<SqliteStore>> open(const std::filesystem::path& path, GalleryStore::Access access,
                                                   int busy_timeout_ms);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  const std::filesystem::path& path() const override { return path_; }
  bool remote() const override { return false; }
  int dim() const override { return dim_; }
  Result<GalleryInfo> info() const override;
  Result<std::int64_t> revision() const override;
  Status opened(const GalleryInfo& info, GalleryStore::Access access) override;

  Result<bool> begin_read() override;
  Status begin_write() override;
  Status commit() override;
  void rollback() override;

  Result<Enrolled> write_identity(const std::string& name, const std::string& metadata,
                                  std::span<const NewTemplate> templates, const std::vector<std::vector<float>>& units,
                                  std::span<const double> norms) override;
  Status copy_identity(const IdentityRow& identity, std::span<const TemplateRow> templates) override;
  Result<bool> remove_identity(const std::string& name) override;
  Result<bool> rename_identity(const std::string& from, const std::string& to) override;
  Result<bool> remove_template(std::int64_t id) override;
  Result<std::vector<IdentityRow>> identities() const override;
  Result<std::vector<TemplateRow>> templates(bool with_embeddings) const override;

  // A file notifies nobody: listening is an Input error, there is no socket, nothing arrives.
  Status listen_for_changes() override;
  int change_socket() const override { return -1; }
  Result<bool> changes_notified() override { return false; }

  // sqlite_unknown_faces.cpp.
  Result<std::int64_t> add_unknown_face(const StoredUnknownFace& face, const UnknownRetention& keep) override;
  Result<std::vector<UnknownFaceRow>> unknown_faces(bool with_embeddings, bool with_jpeg) const override;
  Result<std::size_t> unknown_face_count() const override;
  Result<std::vector<std::vector<unsigned char>>> unknown_face_pictures(
      std::span<const std::int64_t> ids) const override;
  Result<std::size_t> remove_unknown_faces(std::span<const std::int64_t> ids) override;
  Result<std::size_t> remove_unknown_faces_stored_before(std::int64_t cutoff_unix) override;

 private:
  explicit SqliteStore(std::filesystem::path path) : path_(std::move(path)) {}
  // Opens the connection; the file must exist unless `create`.
  static Result<std::unique_ptr<SqliteStore>> connect(const std::filesystem::path& path, bool writable, bool create,
                                                      int busy_timeout_ms);
  Status read_where_not_writable(const std::function<int()>& reopen_immutable);
  Status migrate_to_v2();

  // An error naming the file and what SQLite said, with a hint for the common cases.
  Error error(const std::string& what, int code) const;
  Result<Statement> prepare(const char* sql) const;
  Status exec(const char* sql, const char* what) const;
  Result<std::int64_t> single_int(const char* sql) const;
  // The rows this connection has changed so far (inserted, updated or deleted).
  std::int64_t total_changes() const { return sqlite3_total_changes64(db_); }

  // sqlite_unknown_faces.cpp: whether the file has the table, and adding it to an older gallery.
  Result<bool> has_unknown_faces_table() const;
  Status add_unknown_faces_table_if_missing();

  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  int dim_ = 0;
  std::int64_t changes_at_begin_ = 0;  // total_changes() at BEGIN of a write: no change, no new revision
  std::int64_t unknown_changes_ = 0;   // of those since, rows of unknown_faces (no new revision either)
};

// sqlite_unknown_faces.cpp: the table of unknown faces (part of a new gallery).
extern const char* const kSqliteUnknownFacesTable;

// A text column, "" for NULL.
inline const char* column_text(sqlite3_stmt* s, int column) {
  const unsigned char* text = sqlite3_column_text(s, column);
  return text ? reinterpret_cast<const char*>(text) : "";
}

}  // namespace taconite::gallery

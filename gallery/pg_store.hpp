// The PostgreSQL side of GalleryStore (gallery_store.hpp, gallery_backend.hpp): the same gallery in a PostgreSQL
// database, reached through libpq. Tables `gallery` (one row: schema version, embedding size,
// model fingerprint, revision), `identities` and `templates` (the unit embedding as bytea of
// little-endian float32, its raw norm); ids are identity columns, never given again.
//
// A write is one transaction that first locks the `gallery` row: writers from many processes
// queue there, and each bumps `revision` once. A read snapshot is one REPEATABLE READ, READ ONLY
// transaction; a write that changed something notifies `taconite_gallery` (LISTEN/NOTIFY) as it
// commits. Connection strings holding a password are refused: the password goes into a
// password file (PGPASSFILE, ~/.pgpass) or a service file, never on a command line.
//
// Every error names the gallery: its connection string with any password masked
// (displayed_location.hpp), libpq's own text masked too. Private to the gallery library.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gallery_backend.hpp"

namespace taconite::gallery {

class PgStore final : public GalleryBackend {
 public:
  // Connects; Input error for a connection string holding a password or a service or password
  // file libpq would hang on (pg_client_files.hpp), Io when the server cannot be reached or
  // refuses the login (with a hint: unreachable, wrong password, no password file).
  static Result<std::unique_ptr<PgStore>> connect(const std::string& location);
  // Connects and creates the tables and the gallery row in one transaction; Input error when the
  // database already holds a taconite gallery.
  static Result<std::unique_ptr<PgStore>> create(const std::string& location, const ModelFingerprint& model, int dim);
  ~PgStore() override;
  PgStore(const PgStore&) = delete;
  PgStore& operator=(const PgStore&) = delete;

  // The gallery for messages (displayed_location).
  const std::filesystem::path& path() const override { return path_; }
  bool remote() const override { return true; }
  int dim() const override { return dim_; }
  // The gallery row and counts; Io error naming the gallery when the database holds no taconite
  // gallery (another schema) or a corrupt record.
  Result<GalleryInfo> info() const override;
  Result<std::int64_t> revision() const override;
  // Io error for a schema version other than kSchemaVersion (no migration in PostgreSQL).
  Status opened(const GalleryInfo& info, GalleryStore::Access access) override;

  // REPEATABLE READ, READ ONLY: the snapshot is the first statement's.
  Result<bool> begin_read() override;
  // Locks the gallery row: writers queue there.
  Status begin_write() override;
  // Bumps `revision` and notifies when the transaction changed rows, then commits.
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

  // Change notification: every write that changed something sends NOTIFY taconite_gallery on
  // commit. changes_notified() reads what arrived on the socket; Io error: connection lost.
  Status listen_for_changes() override;
  int change_socket() const override;
  Result<bool> changes_notified() override;

  // Unknown faces (pg_unknown_faces.cpp). None of these counts as a change: no revision bump, no
  // NOTIFY. The first read-write open of a gallery made before the table existed adds it.
  Result<std::int64_t> add_unknown_face(const StoredUnknownFace& face, const UnknownRetention& keep) override;
  Result<std::vector<UnknownFaceRow>> unknown_faces(bool with_embeddings, bool with_jpeg) const override;
  Result<std::vector<std::vector<unsigned char>>> unknown_face_pictures(
      std::span<const std::int64_t> ids) const override;
  Result<std::size_t> unknown_face_count() const override;
  Result<std::size_t> remove_unknown_faces(std::span<const std::int64_t> ids) override;
  Result<std::size_t> remove_unknown_faces_stored_before(std::int64_t cutoff_unix) override;

 private:
  struct Connection;
  PgStore(std::unique_ptr<Connection> connection, std::string name);
  bool in_transaction() const;
  Status create_schema(const ModelFingerprint& model, int dim);
  Status add_unknown_faces_table_if_missing();
  // Inside a write transaction (create_schema, add_unknown_faces_table_if_missing).
  Status create_unknown_faces_table();
  // Whether the database holds the table.
  Result<bool> has_unknown_faces_table() const;
  std::unique_ptr<Connection> connection_;
  std::string name_;
  std::filesystem::path path_;  // name_, as path() gives it
  int dim_ = 0;
  std::int64_t changed_rows_ = 0;  // rows written by the open write transaction
};

}  // namespace taconite::gallery

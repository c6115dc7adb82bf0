// What a gallery's storage does for GalleryStore (gallery_store.hpp): one interface, implemented
// by the SQLite file (sqlite_store.hpp) and the PostgreSQL database (pg_store.hpp). GalleryStore
// checks what the caller gives (names, metadata, embeddings, unknown faces, retention) and owns
// the transactions' scope (ReadSnapshot, WriteBatch); a backend stores and reads, and names its
// gallery in every error. Private to the gallery library.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "gallery_store.hpp"
#include "unknown_fields.hpp"

namespace taconite::gallery {

class GalleryBackend {
 public:
  virtual ~GalleryBackend() = default;

  // The file, or the connection string with any password masked: what errors name.
  virtual const std::filesystem::path& path() const = 0;
  // No file next to it (no persisted HNSW index, no file to watch).
  virtual bool remote() const = 0;
  // The embedding size every template and unknown face has (set by opened() or at creation).
  virtual int dim() const = 0;

  virtual Result<GalleryInfo> info() const = 0;
  virtual Result<std::int64_t> revision() const = 0;
  // After open read `info` (and GalleryStore checked its schema): whatever this backend needs
  // before use, e.g. a read-write open migrating an older schema or adding the unknown_faces table.
  virtual Status opened(const GalleryInfo& info, GalleryStore::Access access) = 0;

  // Starts a read transaction whose snapshot is taken now; false (nothing started) when a
  // transaction is already open.
  virtual Result<bool> begin_read() = 0;
  // Starts a write transaction (holding the write lock, so a busy gallery fails here).
  virtual Status begin_write() = 0;
  // Ends the write, bumping `revision` when it changed identities or templates (unknown faces
  // alone bump nothing). Rolls back when it fails.
  virtual Status commit() = 0;
  // Ends the open transaction keeping nothing (none open: nothing).
  virtual void rollback() = 0;

  // Inside a write. `units` and `norms` are `templates`' checked embeddings (identity_fields.hpp).
  virtual Result<Enrolled> write_identity(const std::string& name, const std::string& metadata,
                                          std::span<const NewTemplate> templates,
                                          const std::vector<std::vector<float>>& units,
                                          std::span<const double> norms) = 0;
  // Inside a write: the identity and its templates (of dim() values) with ids, times and sources kept.
  virtual Status copy_identity(const IdentityRow& identity, std::span<const TemplateRow> templates) = 0;
  // Inside a write; false when there is no identity of that name.
  virtual Result<bool> remove_identity(const std::string& name) = 0;
  // Inside a write; false when there is no identity `from`. `to` is checked and free (GalleryStore).
  virtual Result<bool> rename_identity(const std::string& from, const std::string& to) = 0;
  // Inside a write; false when there is no template `id`. Its identity stays, even with no template left.
  virtual Result<bool> remove_template(std::int64_t id) = 0;
  virtual Result<std::vector<IdentityRow>> identities() const = 0;
  virtual Result<std::vector<TemplateRow>> templates(bool with_embeddings) const = 0;

  // GalleryStore::listen_for_changes, change_socket, changes_notified.
  virtual Status listen_for_changes() = 0;
  virtual int change_socket() const = 0;
  virtual Result<bool> changes_notified() = 0;

  // Unknown faces; without the table (an older gallery opened read-only) none are read and none
  // removed. The writes are inside a write and count as no change.
  virtual Result<std::int64_t> add_unknown_face(const StoredUnknownFace& face, const UnknownRetention& keep) = 0;
  virtual Result<std::vector<UnknownFaceRow>> unknown_faces(bool with_embeddings, bool with_jpeg) const = 0;
  virtual Result<std::size_t> unknown_face_count() const = 0;
  virtual Result<std::vector<std::vector<unsigned char>>> unknown_face_pictures(
      std::span<const std::int64_t> ids) const = 0;
  virtual Result<std::size_t> remove_unknown_faces(std::span<const std::int64_t> ids) = 0;
  virtual Result<std::size_t> remove_unknown_faces_stored_before(std::int64_t cutoff_unix) = 0;
};

}  // namespace taconite::gallery

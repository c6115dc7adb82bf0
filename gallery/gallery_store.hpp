// A face gallery in one SQLite file: who (identities), what they look like (templates: unit
// embeddings with the raw norm as a quality), and the gallery's own record (schema version,
// embedding size, model fingerprint, revision).
//
// The file is in WAL mode: readers (a running pipeline) never block a writer (an enrollment) and
// see either all or none of a write; every write is one transaction and bumps `revision`, which
// tells readers (and the persisted search index) that the gallery changed. A write waits up to
// `busy_timeout_ms` for another writer, then fails with an error naming the file. Identity and
// template ids are never reused (AUTOINCREMENT, schema version 2): a reader holding ids from an
// older revision can never attach them to a newcomer. A reader that reads several things at once
// (identities, then templates) holds a ReadSnapshot so they all come from one revision.
//
// Every writer gets the same checks (identity_fields.hpp): names valid UTF-8 on one line, metadata
// a JSON object, embeddings finite.
//
// A location starting with postgresql:// or postgres://, or a libpq key=value connection string
// (its first key one of libpq's: `service=...`, `host=... dbname=...`), is a gallery in a
// PostgreSQL database instead (pg_store.hpp): the same calls, the same rules, the database as the
// source of truth. Both are a GalleryBackend (gallery_backend.hpp; the file is sqlite_store.hpp).
// A build without libpq (-Dpostgresql=disabled) still recognises such a location and refuses it
// with an Input error saying how to rebuild (postgres_available() is false there).
//
// Unknown faces kept for review (unknown_face.hpp) live in the table `unknown_faces` of the same
// gallery. They are not part of what a pipeline searches: writing them bumps no revision and
// notifies nobody. The table is additive: `create` makes it, the first read-write open of an
// older version 2 gallery adds it (no version bump: an older taconite still opens the file), and
// a reader of a gallery without it sees no unknown faces.
//
// Every error names the file (or the connection string, any password in it masked:
// displayed_location.hpp). No exception leaves these calls. One
// GalleryStore is not safe for concurrent calls; open one per thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model_fingerprint.hpp"
#include "taconite/error.hpp"
#include "unknown_face.hpp"

namespace taconite::gallery {

class GalleryBackend;  // the storage: SQLite or PostgreSQL (gallery_backend.hpp)

// The result of a gallery call that returns nothing but may fail (taconite/error.hpp).
using taconite::Ok;
using taconite::Status;

// Version 2 made ids AUTOINCREMENT. A version 1 file is read as it is and migrated by the first
// read-write open (one transaction; its ids are kept).
inline constexpr int kSchemaVersion = 2;
inline constexpr int kOldestReadableSchemaVersion = 1;
// Bounds what a file can make a reader allocate: a template's size and a name's length.
inline constexpr int kMaxEmbeddingDim = 4096;
inline constexpr std::size_t kMaxNameBytes = 256;
inline constexpr std::size_t kMaxMetadataBytes = 64 * 1024;

// True for a PostgreSQL connection string (see above), false for a file path.
bool is_postgres_location(std::string_view location);
// False in a build without libpq: PostgreSQL locations are refused.
bool postgres_available();

struct GalleryInfo {
  int schema_version = 0;
  int embedding_dim = 0;
  std::string model_fingerprint;  // ModelFingerprint::sha256 of the bundle it was made with
  std::string model;              // the bundle's model name, for messages
  std::int64_t created_unix = 0;
  std::int64_t revision = 0;  // bumped by every write
  std::int64_t identities = 0;
  std::int64_t templates = 0;
};

struct IdentityRow {
  std::int64_t id = 0;
  std::string name;
  std::string metadata;  // free JSON object text, "{}" when none
  std::int64_t templates = 0;
  std::int64_t created_unix = 0;
};

struct TemplateRow {
  std::int64_t id = 0;
  std::int64_t identity_id = 0;
  std::vector<float> embedding;  // unit length; empty when read without embeddings
  double norm = 0.0;             // the raw embedding's L2 norm (AdaFace's quality signal)
  std::string source;            // where it came from (file path, "import", ...)
  std::int64_t created_unix = 0;
};

struct NewTemplate {
  std::vector<float> embedding;  // raw or unit, finite, not zero; stored L2-normalised (as given
                                 // when already of unit length: an export imports bit-exact)
  double norm = 0.0;             // 0: the L2 norm of `embedding`; else finite and positive
  std::string source;             // stored mended (identity_fields.hpp printable_source)
  std::int64_t created_unix = 0;  // 0: now
};

// What one enrollment wrote. A template bit-identical to one the identity already has is not
// stored again (importing the same export twice adds nothing); it counts as a duplicate.
struct Enrolled {
  std::int64_t identity = 0;
  std::size_t added = 0;
  std::size_t duplicates = 0;
};

class GalleryStore {
 public:
  enum class Access { ReadOnly, ReadWrite };

  // A new gallery file for embeddings of `dim` values from the model `model`. Fails when the file
  // exists.
  static Result<GalleryStore> create(const std::filesystem::path& path, const ModelFingerprint& model, int dim);
  // Opens an existing gallery; fails (naming the file) when it is missing, not a gallery, of a
  // schema version this program does not read, or corrupt. ReadWrite migrates version 1 to 2.
  static Result<GalleryStore> open(const std::filesystem::path& path, Access access, int busy_timeout_ms = 5000);

  GalleryStore(GalleryStore&&) noexcept;
  GalleryStore& operator=(GalleryStore&&) noexcept;
  ~GalleryStore();

  // The file, or the connection string of a PostgreSQL gallery.
  const std::filesystem::path& path() const;
  // A PostgreSQL gallery: no file next to it (no persisted HNSW index, no file to watch).
  bool remote() const;
  Result<GalleryInfo> info() const;
  Result<std::int64_t> revision() const;

  // Input error when `model` is not the model the gallery was made with: embeddings of different
  // models are not comparable, and mixing them gives silently wrong matches.
  Status check_model(const ModelFingerprint& model) const;

  // Reads of this store while it lives all see one committed revision (one SQLite read
  // transaction), however many calls they take. Ends when destroyed; the store must outlive it.
  // Inside an open snapshot another one is a no-op.
  class ReadSnapshot {
   public:
    ReadSnapshot(ReadSnapshot&& other) noexcept;
    ReadSnapshot& operator=(ReadSnapshot&&) = delete;
    ~ReadSnapshot();

   private:
    friend class GalleryStore;
    explicit ReadSnapshot(GalleryBackend* backend) : backend_(backend) {}
    GalleryBackend* backend_ = nullptr;  // null: ends nothing
  };
  Result<ReadSnapshot> read_snapshot() const;

  // Several enrollments as one transaction: all of them are kept (commit) or none (destroyed
  // without a commit, e.g. on the first error). The store must outlive it.
  class WriteBatch {
   public:
    WriteBatch(WriteBatch&& other) noexcept;
    WriteBatch& operator=(WriteBatch&&) = delete;
    ~WriteBatch();

    // Adds templates to the identity `name`, creating it (with `metadata`, a JSON object text, or
    // "{}" when empty) if it is new; an existing identity keeps its metadata. Input error for a
    // bad name, metadata or embedding (identity_fields.hpp, NewTemplate), the batch unchanged. A
    // failure while writing rolls the whole batch back and ends it (commit() then refuses).
    Result<Enrolled> enroll(const std::string& name, const std::string& metadata,
                            std::span<const NewTemplate> templates);
    // Copies an identity and its templates (with their embeddings) from another gallery, keeping
    // ids, names, metadata, sources and times (taconite-gallery copy). Fails when an id or name
    // is taken; the batch then ends, rolled back.
    Status copy_identity(const IdentityRow& identity, std::span<const TemplateRow> templates);
    // Deletes these unknown faces (ids that do not exist are ignored); returns how many went.
    // `taconite-gallery name` enrols a cluster and removes its faces in one transaction; the
    // removal alone bumps no revision.
    Result<std::size_t> remove_unknown_faces(std::span<const std::int64_t> ids);
    // Keeps the writes and bumps `revision` (when an identity or template changed). The batch
    // ends either way.
    Status commit();

   private:
    friend class GalleryStore;
    explicit WriteBatch(GalleryBackend* backend) : backend_(backend) {}
    // Ends the batch keeping nothing (after a failure half-way: commit() then refuses).
    void abandon();
    GalleryBackend* backend_ = nullptr;  // null once committed or rolled back
  };
  Result<WriteBatch> begin_write();

  // One enrollment in its own batch (see WriteBatch::enroll). Returns the identity id.
  Result<std::int64_t> enroll(const std::string& name, const std::string& metadata,
                              std::span<const NewTemplate> templates);
  // Removes an identity and its templates; false when there is none of that name. Any name is
  // accepted here, so names stored before the checks existed can be removed.
  Result<bool> remove(const std::string& name);
  // Renames an identity (its templates and ids kept); false when there is none named `from`. Input
  // error for a bad new name (identity_fields.hpp) or one another identity has; nothing changes then.
  Result<bool> rename(const std::string& from, const std::string& to);
  // Removes one template; false when there is none of that id. Its identity stays.
  Result<bool> remove_template(std::int64_t template_id);

  // A PostgreSQL gallery notifies every committed change (LISTEN/NOTIFY): listen_for_changes()
  // subscribes this connection (Input error for an SQLite file), change_socket() is the socket to
  // wait on (-1 for a file), changes_notified() reads it: true when a change was committed since.
  // Io error when the connection is lost.
  Status listen_for_changes();
  int change_socket() const;
  Result<bool> changes_notified();

  // Stores one unknown face and applies `keep`, in one transaction. Does NOT bump the gallery's
  // revision and sends no change notification (running pipelines have nothing to reload). Input
  // error for a bad field (named), Io error naming the gallery otherwise. Returns its id.
  Result<std::int64_t> add_unknown_face(const NewUnknownFace& face, const UnknownRetention& keep);
  // Every kept unknown face in id order (none when the gallery has no table for them). Io error
  // when it holds more than kMaxUnknownFaces or a corrupt row.
  Result<std::vector<UnknownFaceRow>> unknown_faces(bool with_embeddings, bool with_jpeg) const;
  // How many unknown faces it keeps (0 without the table), counted without reading them: also
  // past kMaxUnknownFaces.
  Result<std::size_t> unknown_face_count() const;
  // The JPEG of each of these unknown faces, in the order asked; empty for a face kept without a
  // picture or gone. Each is at most kMaxUnknownJpegBytes: ask for a few at a time.
  Result<std::vector<std::vector<unsigned char>>> unknown_face_pictures(std::span<const std::int64_t> ids) const;
  // Deletes these unknown faces (ids that do not exist are ignored); returns how many went. No
  // revision bump (`forget`).
  Result<std::size_t> remove_unknown_faces(std::span<const std::int64_t> ids);
  // Deletes every unknown face stored before `cutoff_unix` (created_unix < cutoff_unix) in one
  // statement, however many there are; returns how many went. No revision bump (`forget
  // --older-than`, the way out of a gallery holding more than kMaxUnknownFaces).
  Result<std::size_t> remove_unknown_faces_stored_before(std::int64_t cutoff_unix);

  Result<std::vector<IdentityRow>> identities() const;
  // Every template, in id order; without embeddings only ids, identity, norm, source and time.
  Result<std::vector<TemplateRow>> templates(bool with_embeddings) const;

 private:
  explicit GalleryStore(std::unique_ptr<GalleryBackend> backend);
  std::unique_ptr<GalleryBackend> backend_;
};

}  // namespace taconite::gallery

// Unknown faces in an SQLite gallery (sqlite_store.hpp, unknown_face.hpp): the table
// `unknown_faces`, written inside the caller's write without counting as a change (no revision bump).
#include <cstring>

#include "sqlite_store.hpp"
#include "unix_time.hpp"

namespace taconite::gallery {

// AUTOINCREMENT: an id is never given again, so `name 17 Alice` after a listing can never reach
// a face stored later. The embedding is the unit float32 vector, like a template's; a face kept
// without a picture has an empty jpeg.
const char* const kSqliteUnknownFacesTable = R"sql(
CREATE TABLE IF NOT EXISTS unknown_faces(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  embedding BLOB NOT NULL,
  norm REAL NOT NULL,
  jpeg BLOB NOT NULL,
  stream TEXT NOT NULL,
  track_id INTEGER NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms INTEGER NOT NULL,
  quality REAL NOT NULL,
  nearest_identity INTEGER NOT NULL,
  nearest_name TEXT NOT NULL,
  nearest_similarity REAL NOT NULL,
  created_unix INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS unknown_faces_by_created ON unknown_faces(created_unix);
)sql";

namespace {

// A blob parameter; an empty one is an empty blob, not NULL.
void bind_blob(sqlite3_stmt* st, int index, const void* data, std::size_t bytes) {
  if (bytes == 0)
    sqlite3_bind_zeroblob(st, index, 0);
  else
    sqlite3_bind_blob(st, index, data, static_cast<int>(bytes), SQLITE_STATIC);
}

}  // namespace

Result<bool> SqliteStore::has_unknown_faces_table() const {
  Result<std::int64_t> n =
      single_int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'unknown_faces'");
  if (!n) return n.error();
  return n.value() > 0;
}

Result<std::int64_t> SqliteStore::add_unknown_face(const StoredUnknownFace& stored, const UnknownRetention& keep) {
  const std::int64_t changes_before = total_changes();
  const NewUnknownFace& face = stored.face;
  Result<Statement> insert = prepare(
      "INSERT INTO unknown_faces(embedding, norm, jpeg, stream, track_id, first_seen_ms, last_seen_ms, quality,"
      " nearest_identity, nearest_name, nearest_similarity, created_unix)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.error();
  sqlite3_stmt* st = insert.value().get();
  const std::vector<float>& unit = stored.embedding.unit;
  bind_blob(st, 1, unit.data(), unit.size() * sizeof(float));
  sqlite3_bind_double(st, 2, stored.embedding.norm);
  bind_blob(st, 3, face.jpeg.data(), face.jpeg.size());
  sqlite3_bind_text(st, 4, face.stream.c_str(), static_cast<int>(face.stream.size()), SQLITE_STATIC);
  sqlite3_bind_int64(st, 5, face.track_id);
  sqlite3_bind_int64(st, 6, face.first_seen_ms);
  sqlite3_bind_int64(st, 7, face.last_seen_ms);
  sqlite3_bind_double(st, 8, face.quality);
  sqlite3_bind_int64(st, 9, face.nearest_identity);
  sqlite3_bind_text(st, 10, stored.nearest_name.c_str(), static_cast<int>(stored.nearest_name.size()), SQLITE_STATIC);
  sqlite3_bind_double(st, 11, stored.nearest_similarity);
  sqlite3_bind_int64(st, 12, now_unix());
  if (const int rc = sqlite3_step(st); rc != SQLITE_DONE) return error("cannot add the unknown face", rc);
  const std::int64_t id = sqlite3_last_insert_rowid(db_);

  Result<Statement> too_old = prepare("DELETE FROM unknown_faces WHERE created_unix < ?");
  if (!too_old) return too_old.error();
  sqlite3_bind_int64(too_old.value().get(), 1, now_unix() - keep.max_age_s);
  if (const int rc = sqlite3_step(too_old.value().get()); rc != SQLITE_DONE)
    return error("cannot apply the unknown-face retention", rc);
  Result<Statement> too_many = prepare(
      "DELETE FROM unknown_faces WHERE id <= (SELECT id FROM unknown_faces ORDER BY id DESC LIMIT 1 OFFSET ?)");
  if (!too_many) return too_many.error();
  sqlite3_bind_int64(too_many.value().get(), 1, static_cast<std::int64_t>(keep.max_count));
  if (const int rc = sqlite3_step(too_many.value().get()); rc != SQLITE_DONE)
    return error("cannot apply the unknown-face retention", rc);
  unknown_changes_ += total_changes() - changes_before;
  return id;
}

Status SqliteStore::add_unknown_faces_table_if_missing() {
  Result<bool> present = has_unknown_faces_table();
  if (!present) return present.error();
  if (present.value()) return Ok{};
  // Its own transaction: a schema change writes no row, and a WriteBatch keeps only rows.
  if (Status s = exec("BEGIN IMMEDIATE", "cannot start a write"); !s) return s;
  Status s = exec(kSqliteUnknownFacesTable, "cannot add the table unknown_faces");
  if (s) s = exec("COMMIT", "cannot commit");
  if (!s) rollback();
  return s;
}

Result<std::size_t> SqliteStore::remove_unknown_faces(std::span<const std::int64_t> ids) {
  Result<bool> present = has_unknown_faces_table();
  if (!present) return present.error();
  if (!present.value()) return std::size_t{0};
  Result<Statement> del = prepare("DELETE FROM unknown_faces WHERE id = ?");
  if (!del) return del.error();
  std::size_t removed = 0;
  for (const std::int64_t id : ids) {
    sqlite3_stmt* st = del.value().get();
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, id);
    if (const int rc = sqlite3_step(st); rc != SQLITE_DONE) return error("cannot remove unknown faces", rc);
    removed += static_cast<std::size_t>(sqlite3_changes(db_));
  }
  unknown_changes_ += static_cast<std::int64_t>(removed);
  return removed;
}

Result<std::size_t> SqliteStore::remove_unknown_faces_stored_before(std::int64_t cutoff_unix) {
  Result<bool> present = has_unknown_faces_table();
  if (!present) return present.error();
  if (!present.value()) return std::size_t{0};
  Result<Statement> del = prepare("DELETE FROM unknown_faces WHERE created_unix < ?");
  if (!del) return del.error();
  sqlite3_bind_int64(del.value().get(), 1, cutoff_unix);
  if (const int rc = sqlite3_step(del.value().get()); rc != SQLITE_DONE) return error("cannot remove unknown faces", rc);
  const auto removed = static_cast<std::size_t>(sqlite3_changes64(db_));
  unknown_changes_ += static_cast<std::int64_t>(removed);
  return removed;
}

Result<std::size_t> SqliteStore::unknown_face_count() const {
  Result<bool> present = has_unknown_faces_table();
  if (!present) return present.error();
  if (!present.value()) return std::size_t{0};
  Result<std::int64_t> n = single_int("SELECT count(*) FROM unknown_faces");
  if (!n) return n.error();
  return static_cast<std::size_t>(n.value());
}

Result<std::vector<UnknownFaceRow>> SqliteStore::unknown_faces(bool with_embeddings, bool with_jpeg) const {
  const std::string& gallery = path_.string();
  Result<bool> present = has_unknown_faces_table();
  if (!present) return present.error();
  if (!present.value()) return std::vector<UnknownFaceRow>{};
  // Without embeddings or pictures the blobs are not even read.
  const std::string sql = std::string(
                              "SELECT id, norm, stream, track_id, first_seen_ms, last_seen_ms, quality, nearest_identity,"
                              " nearest_name, nearest_similarity, created_unix, ") +
                          (with_embeddings ? "embedding" : "NULL") + ", " + (with_jpeg ? "jpeg" : "NULL") +
                          " FROM unknown_faces ORDER BY id";
  Result<Statement> s = prepare(sql.c_str());
  if (!s) return s.error();
  sqlite3_stmt* st = s.value().get();
  const std::size_t bytes = static_cast<std::size_t>(dim_) * sizeof(float);
  std::vector<UnknownFaceRow> faces;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (faces.size() >= kMaxUnknownFaces)
      return Error{ErrorKind::Io, gallery + ": holds more than " + std::to_string(kMaxUnknownFaces) +
                                      " unknown faces, more than this program reads (forget some, or lower the "
                                      "retention)"};
    UnknownFaceRow f;
    f.id = sqlite3_column_int64(st, 0);
    f.norm = sqlite3_column_double(st, 1);
    f.stream = column_text(st, 2);
    f.track_id = sqlite3_column_int64(st, 3);
    f.first_seen_ms = sqlite3_column_int64(st, 4);
    f.last_seen_ms = sqlite3_column_int64(st, 5);
    f.quality = sqlite3_column_double(st, 6);
    f.nearest_identity = sqlite3_column_int64(st, 7);
    f.nearest_name = column_text(st, 8);
    f.nearest_similarity = sqlite3_column_double(st, 9);
    f.created_unix = sqlite3_column_int64(st, 10);
    if (with_embeddings) {
      const void* blob = sqlite3_column_blob(st, 11);
      if (Status ok = check_stored_embedding(blob, static_cast<std::size_t>(sqlite3_column_bytes(st, 11)),
                                             dim_, gallery, "the embedding of unknown face", f.id);
          !ok)
        return ok.error();
      f.embedding.resize(static_cast<std::size_t>(dim_));
      std::memcpy(f.embedding.data(), blob, bytes);
    }
    if (with_jpeg) {
      const auto* jpeg = static_cast<const unsigned char*>(sqlite3_column_blob(st, 12));
      const std::size_t jpeg_bytes = static_cast<std::size_t>(sqlite3_column_bytes(st, 12));
      if (jpeg_bytes > kMaxUnknownJpegBytes)
        return Error{ErrorKind::Io, gallery + ": unknown face " + std::to_string(f.id) + " holds a JPEG of " +
                                        std::to_string(jpeg_bytes) + " bytes, more than " +
                                        std::to_string(kMaxUnknownJpegBytes) + " (corrupt gallery)"};
      if (jpeg) f.jpeg.assign(jpeg, jpeg + jpeg_bytes);
    }
    faces.push_back(std::move(f));
  }
  if (rc != SQLITE_DONE) return error("cannot read the unknown faces", rc);
  return faces;
}

Result<std::vector<std::vector<unsigned char>>> SqliteStore::unknown_face_pictures(std::span<const std::int64_t> ids) const {
  std::vector<std::vector<unsigned char>> pictures(ids.size());
  Result<bool> present = has_unknown_faces_table();
  if (!present) return present.error();
  if (!present.value()) return pictures;
  Result<Statement> s = prepare("SELECT jpeg FROM unknown_faces WHERE id = ?");
  if (!s) return s.error();
  sqlite3_stmt* st = s.value().get();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, ids[i]);
    const int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) continue;  // gone
    if (rc != SQLITE_ROW) return error("cannot read an unknown face's picture", rc);
    const auto* jpeg = static_cast<const unsigned char*>(sqlite3_column_blob(st, 0));
    const std::size_t bytes = static_cast<std::size_t>(sqlite3_column_bytes(st, 0));
    if (bytes > kMaxUnknownJpegBytes)
      return Error{ErrorKind::Io, path_.string() + ": unknown face " + std::to_string(ids[i]) +
                                      " holds a JPEG of " + std::to_string(bytes) + " bytes, more than " +
                                      std::to_string(kMaxUnknownJpegBytes) + " (corrupt gallery)"};
    if (jpeg) pictures[i].assign(jpeg, jpeg + bytes);
  }
  return pictures;
}

}  // namespace taconite::gallery

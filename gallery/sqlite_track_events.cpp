// The event log in the gallery's SQLite file: table `track_events` beside the gallery's own, made
// by the first read-write open (CREATE ... IF NOT EXISTS: additive, no schema-version bump).
#include <sqlite3.h>

#include <filesystem>
#include <memory>

#include "track_event_log_backend.hpp"

namespace taconite::gallery {

namespace {

constexpr sqlite3_int64 kGalleryApplicationId = 0x54414347;  // "TACG", as sqlite_store.cpp writes it

constexpr const char* kTable = R"sql(
CREATE TABLE IF NOT EXISTS track_events(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  epoch_s REAL NOT NULL,
  camera TEXT NOT NULL,
  kind TEXT NOT NULL,
  uid TEXT NOT NULL,
  track_id INTEGER NOT NULL,
  label_state TEXT NOT NULL,
  label TEXT,
  label_id INTEGER,
  confidence REAL,
  reason TEXT NOT NULL,
  first_epoch_s REAL,
  last_epoch_s REAL,
  dwell_s REAL,
  frames INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  document TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS track_events_by_time ON track_events(epoch_s);
CREATE INDEX IF NOT EXISTS track_events_by_camera ON track_events(camera, epoch_s);
CREATE INDEX IF NOT EXISTS track_events_by_label ON track_events(label, epoch_s);
CREATE INDEX IF NOT EXISTS track_events_by_uid ON track_events(uid);
)sql";

struct StatementDeleter {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

const char* text_at(sqlite3_stmt* s, int column) {
  const unsigned char* text = sqlite3_column_text(s, column);
  return text ? reinterpret_cast<const char*>(text) : "";
}

std::optional<double> optional_double(sqlite3_stmt* s, int column) {
  if (sqlite3_column_type(s, column) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(s, column);
}

class SqliteEventLog final : public EventLogBackend {
 public:
  SqliteEventLog(std::string path, sqlite3* db) : shown_(std::move(path)), db_(db) {}
  ~SqliteEventLog() override { sqlite3_close_v2(db_); }
  SqliteEventLog(const SqliteEventLog&) = delete;
  SqliteEventLog& operator=(const SqliteEventLog&) = delete;

  const std::string& shown() const override { return shown_; }

  Status start(TrackEventLog::Access access) {
    // As the gallery's own open (sqlite_store.cpp): the header's application_id says "TACG".
    Result<Statement> id = prepare("PRAGMA application_id");
    if (!id) return id.error();
    if (const int rc = sqlite3_step(id.value().get()); rc != SQLITE_ROW)
      return error("cannot read the gallery (corrupt, or not a taconite gallery?)", rc);
    if (sqlite3_column_int64(id.value().get(), 0) != kGalleryApplicationId)
      return Error{ErrorKind::Io, shown_ + ": an SQLite file but not a taconite gallery (application_id " +
                                      std::to_string(sqlite3_column_int64(id.value().get(), 0)) + ")"};
    Result<bool> gallery = table_exists("gallery");
    if (!gallery) return gallery.error();
    if (!gallery.value())
      return Error{ErrorKind::Io, shown_ +
                                      ": not a taconite gallery (no table gallery; make one with "
                                      "taconite-gallery create)"};
    if (access == TrackEventLog::Access::ReadWrite) {
      const int rc =
          sqlite3_exec(db_, (std::string("BEGIN IMMEDIATE;") + kTable + "COMMIT;").c_str(), nullptr, nullptr, nullptr);
      if (rc != SQLITE_OK) {
        Error e = error("cannot add the table track_events", rc);
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        return e;
      }
      has_table_ = true;
      return Ok{};
    }
    Result<bool> events = table_exists("track_events");
    if (!events) return events.error();
    has_table_ = events.value();
    return Ok{};
  }

  Result<std::int64_t> append(const StoredTrackEvent& e) override {
    Result<Statement> s = prepare(
        "INSERT INTO track_events(epoch_s, camera, kind, uid, track_id, label_state, label, label_id, confidence,"
        " reason, first_epoch_s, last_epoch_s, dwell_s, frames, snapshot, document)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)");
    if (!s) return s.error();
    sqlite3_stmt* st = s.value().get();
    sqlite3_bind_double(st, 1, e.epoch_s);
    bind_text(st, 2, e.camera);
    bind_text(st, 3, e.kind);
    bind_text(st, 4, e.uid);
    sqlite3_bind_int64(st, 5, e.track_id);
    bind_text(st, 6, e.label_state);
    if (e.label) bind_text(st, 7, *e.label);
    if (e.label_id) sqlite3_bind_int64(st, 8, *e.label_id);
    bind_double(st, 9, e.confidence);
    bind_text(st, 10, e.reason);
    bind_double(st, 11, e.first_epoch_s);
    bind_double(st, 12, e.last_epoch_s);
    bind_double(st, 13, e.dwell_s);
    sqlite3_bind_int64(st, 14, e.frames);
    bind_text(st, 15, e.snapshot);
    bind_text(st, 16, e.document);
    const int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE) return error("cannot store a track event", rc);
    return static_cast<std::int64_t>(sqlite3_last_insert_rowid(db_));
  }

  Result<bool> set_snapshot(const std::string& uid, SnapshotOf which, const std::string& path) override {
    Result<Statement> s = prepare(
        ("UPDATE track_events SET snapshot = ?2 WHERE id = (" + snapshot_event_query(which, "?1") + ")").c_str());
    if (!s) return s.error();
    bind_text(s.value().get(), 1, uid);
    bind_text(s.value().get(), 2, path);
    const int rc = sqlite3_step(s.value().get());
    if (rc != SQLITE_DONE) return error("cannot store a snapshot's path", rc);
    return sqlite3_changes(db_) > 0;
  }

  Result<std::vector<StoredTrackEvent>> query(const TrackEventFilter& f) const override {
    std::vector<StoredTrackEvent> rows;
    if (!has_table_) return rows;  // a read-only gallery from before the event log
    std::string sql = std::string("SELECT ") + kTrackEventColumns + " FROM track_events WHERE 1";
    if (f.person) sql += " AND label = ?1";
    if (f.camera) sql += " AND camera = ?2";
    if (f.kind) sql += " AND kind = ?3";
    if (f.uid) sql += " AND uid = ?4";
    if (f.since_epoch_s) sql += " AND epoch_s >= ?5";
    if (f.until_epoch_s) sql += " AND epoch_s <= ?6";
    sql += " ORDER BY epoch_s DESC, id DESC LIMIT ?7";
    Result<Statement> s = prepare(sql.c_str());
    if (!s) return s.error();
    sqlite3_stmt* st = s.value().get();
    if (f.person) bind_text(st, 1, *f.person);
    if (f.camera) bind_text(st, 2, *f.camera);
    if (f.kind) bind_text(st, 3, *f.kind);
    if (f.uid) bind_text(st, 4, *f.uid);
    if (f.since_epoch_s) sqlite3_bind_double(st, 5, *f.since_epoch_s);
    if (f.until_epoch_s) sqlite3_bind_double(st, 6, *f.until_epoch_s);
    sqlite3_bind_int64(st, 7, static_cast<sqlite3_int64>(f.limit));
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) rows.push_back(row(st));
    if (rc != SQLITE_DONE) return error("cannot read the track events", rc);
    return rows;
  }

  Result<std::size_t> prune(std::size_t max_rows, double cutoff_epoch_s) override {
    const int before = sqlite3_total_changes(db_);
    if (cutoff_epoch_s > 0) {
      Result<Statement> s = prepare("DELETE FROM track_events WHERE epoch_s < ?1");
      if (!s) return s.error();
      sqlite3_bind_double(s.value().get(), 1, cutoff_epoch_s);
      if (const int rc = sqlite3_step(s.value().get()); rc != SQLITE_DONE)
        return error("cannot remove old track events", rc);
    }
    if (max_rows > 0) {
      // The newest max_rows stay (by time, then id: the order query() gives).
      Result<Statement> s = prepare(
          "DELETE FROM track_events WHERE id IN (SELECT id FROM track_events ORDER BY epoch_s DESC, id DESC"
          " LIMIT -1 OFFSET ?1)");
      if (!s) return s.error();
      sqlite3_bind_int64(s.value().get(), 1, static_cast<sqlite3_int64>(max_rows));
      if (const int rc = sqlite3_step(s.value().get()); rc != SQLITE_DONE)
        return error("cannot remove track events beyond the bound", rc);
    }
    return static_cast<std::size_t>(sqlite3_total_changes(db_) - before);
  }

  Result<std::size_t> count() const override {
    if (!has_table_) return std::size_t{0};
    Result<Statement> s = prepare("SELECT count(*) FROM track_events");
    if (!s) return s.error();
    if (const int rc = sqlite3_step(s.value().get()); rc != SQLITE_ROW)
      return error("cannot count the track events", rc);
    return static_cast<std::size_t>(sqlite3_column_int64(s.value().get(), 0));
  }

 private:
  Error error(const std::string& what, int code) const {
    std::string message = shown_ + ": " + what + ": " + sqlite3_errmsg(db_);
    switch (code & 0xff) {
      case SQLITE_BUSY:
      case SQLITE_LOCKED:
        message += " (another process holds the gallery's write lock; try again)";
        break;
      case SQLITE_READONLY:
        message += " (the file or its directory is read-only)";
        break;
      case SQLITE_FULL:
        message += " (the disk is full)";
        break;
      default:
        break;
    }
    return Error{ErrorKind::Io, message};
  }

  Result<Statement> prepare(const char* sql) const {
    sqlite3_stmt* s = nullptr;
    const int rc = sqlite3_prepare_v2(db_, sql, -1, &s, nullptr);
    if (rc != SQLITE_OK) return error("cannot read the event log", rc);
    return Statement(s);
  }

  Result<bool> table_exists(const char* name) const {
    Result<Statement> s = prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
    if (!s) return s.error();
    sqlite3_bind_text(s.value().get(), 1, name, -1, SQLITE_STATIC);
    if (const int rc = sqlite3_step(s.value().get()); rc != SQLITE_ROW)
      return error("cannot read the gallery (corrupt, or not a taconite gallery?)", rc);
    return sqlite3_column_int64(s.value().get(), 0) > 0;
  }

  static void bind_text(sqlite3_stmt* s, int index, const std::string& text) {
    sqlite3_bind_text(s, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  static void bind_double(sqlite3_stmt* s, int index, std::optional<double> value) {
    if (value) sqlite3_bind_double(s, index, *value);
  }

  static StoredTrackEvent row(sqlite3_stmt* s) {
    StoredTrackEvent e;
    e.id = sqlite3_column_int64(s, 0);
    e.epoch_s = sqlite3_column_double(s, 1);
    e.camera = text_at(s, 2);
    e.kind = text_at(s, 3);
    e.uid = text_at(s, 4);
    e.track_id = sqlite3_column_int64(s, 5);
    e.label_state = text_at(s, 6);
    if (sqlite3_column_type(s, 7) != SQLITE_NULL) e.label = text_at(s, 7);
    if (sqlite3_column_type(s, 8) != SQLITE_NULL) e.label_id = sqlite3_column_int64(s, 8);
    e.confidence = optional_double(s, 9);
    e.reason = text_at(s, 10);
    e.first_epoch_s = optional_double(s, 11);
    e.last_epoch_s = optional_double(s, 12);
    e.dwell_s = optional_double(s, 13);
    e.frames = sqlite3_column_int64(s, 14);
    e.snapshot = text_at(s, 15);
    e.document = text_at(s, 16);
    return e;
  }

  std::string shown_;
  sqlite3* db_;
  bool has_table_ = false;
};

}  // namespace

Result<std::unique_ptr<EventLogBackend>> open_sqlite_event_log(const std::string& path, TrackEventLog::Access access,
                                                               int busy_timeout_ms) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return Error{ErrorKind::Io, path + ": no such gallery file (make one with taconite-gallery create)"};
  const bool writable = access == TrackEventLog::Access::ReadWrite;
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY, nullptr);
  auto log = std::make_unique<SqliteEventLog>(path, db);  // closes `db` whatever happens next
  if (rc != SQLITE_OK)
    return Error{ErrorKind::Io, path + ": cannot open the gallery: " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc))};
  sqlite3_busy_timeout(db, busy_timeout_ms);
  if (Status s = log->start(access); !s) return s.error();
  return std::unique_ptr<EventLogBackend>(std::move(log));
}

}  // namespace taconite::gallery

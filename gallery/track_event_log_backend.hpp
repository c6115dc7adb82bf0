// Where the event log (track_event_log.hpp) keeps its rows: the gallery's SQLite file
// (sqlite_track_events.cpp) or PostgreSQL database (pg_track_events.cpp; pg_track_events_unavailable.cpp
// without libpq). TrackEventLog validates what it hands them. Private to the gallery library.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "track_event_log.hpp"

namespace taconite::gallery {

class EventLogBackend {
 public:
  virtual ~EventLogBackend() = default;
  virtual const std::string& shown() const = 0;
  virtual Result<std::int64_t> append(const StoredTrackEvent& event) = 0;
  virtual Result<bool> set_snapshot(const std::string& uid, SnapshotOf which, const std::string& path) = 0;
  virtual Result<std::vector<StoredTrackEvent>> query(const TrackEventFilter& filter) const = 0;
  virtual Result<std::size_t> prune(std::size_t max_rows, double cutoff_epoch_s) = 0;  // cutoff <= 0: none
  virtual Result<std::size_t> count() const = 0;
};

Result<std::unique_ptr<EventLogBackend>> open_sqlite_event_log(const std::string& path, TrackEventLog::Access access,
                                                               int busy_timeout_ms);
Result<std::unique_ptr<EventLogBackend>> open_postgres_event_log(const std::string& location,
                                                                 TrackEventLog::Access access);

// The columns in the order the backends select them (the SQL of both).
inline constexpr const char* kTrackEventColumns =
    "id, epoch_s, camera, kind, uid, track_id, label_state, label, label_id, confidence, reason, first_epoch_s, "
    "last_epoch_s, dwell_s, frames, snapshot, document";

// The subquery choosing the event a snapshot belongs to; `uid` is the uid's parameter (`$1`, `?1`).
inline std::string snapshot_event_query(SnapshotOf which, const std::string& uid) {
  return which == SnapshotOf::End ? "SELECT max(id) FROM track_events WHERE uid = " + uid + " AND kind = 'end'"
                                  : "SELECT min(id) FROM track_events WHERE uid = " + uid +
                                        " AND kind IN ('new', 'update') AND label_state IN ('known', 'unknown')";
}

}  // namespace taconite::gallery

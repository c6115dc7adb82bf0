// The event history: every taconite-tracks/1 event (docs/tracks-message.md) a site's cameras sent,
// stored in the gallery's own database (the SQLite file or the PostgreSQL database of
// gallery_store.hpp), one table `track_events`, indexed by time, camera, person and track uid.
//
// The table is additive: the first read-write open makes it (no schema-version bump, so an older
// taconite still opens the gallery, and a gallery without it still serves identify). A read-only
// open of a gallery without it sees no events. The log has its own connection to the location;
// one TrackEventLog is not safe for concurrent calls (open one per thread). No exception leaves
// these calls; every error names the gallery (its password masked: displayed_location.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "taconite/error.hpp"

namespace taconite::gallery {

using taconite::Ok;
using taconite::Status;

// Bounds on what one event may hold (a longer one is refused with an Input error naming the field).
inline constexpr std::size_t kMaxEventDocumentBytes = 64 * 1024;  // the event JSON as published
inline constexpr std::size_t kMaxEventFieldBytes = 1024;          // camera, kind, uid, label, reason, ...
inline constexpr std::size_t kMaxEventPathBytes = 4096;           // the snapshot's path
// The most rows one query returns.
inline constexpr std::size_t kMaxEventQueryRows = 10000;
inline constexpr std::size_t kDefaultEventQueryRows = 100;

// One stored event. Times are Unix seconds (UTC) as doubles (microseconds survive).
struct StoredTrackEvent {
  std::int64_t id = 0;  // given by append (increasing); ignored by append
  double epoch_s = 0;   // when the element sent the event
  std::string camera;   // the event's "stream"
  std::string kind;     // "new", "update", "end"
  std::string uid;      // the track's unique id
  std::int64_t track_id = 0;
  std::string label_state;  // "pending", "known", "unknown" or "" (no taconiteidentify)
  std::optional<std::string> label;
  std::optional<std::int64_t> label_id;
  std::optional<double> confidence;
  std::string reason;                                          // "end" only; else ""
  std::optional<double> first_epoch_s, last_epoch_s, dwell_s;  // "end" only
  std::int64_t frames = 0;                                     // "end" only
  std::string snapshot;                                        // the full-frame snapshot's path, "" when none
  std::string document;  // the event JSON as published (at most kMaxEventDocumentBytes)
};

// What query() selects: every member set narrows it. Rows come newest first (epoch_s, then id).
struct TrackEventFilter {
  std::optional<std::string> person;  // label equal to it
  std::optional<std::string> camera;
  std::optional<std::string> kind;
  std::optional<std::string> uid;
  std::optional<double> since_epoch_s;         // epoch_s >= since
  std::optional<double> until_epoch_s;         // epoch_s <= until
  std::size_t limit = kDefaultEventQueryRows;  // 1..kMaxEventQueryRows, else Input error
};

// Which event of a track a snapshot belongs to (SnapshotWriter's "decided" and "end").
enum class SnapshotOf { Decision, End };

class EventLogBackend;  // SQLite or PostgreSQL (track_event_log_backend.hpp)

class TrackEventLog {
 public:
  enum class Access { ReadOnly, ReadWrite };
  // The gallery at `location` (a file or a PostgreSQL connection string) must exist and be a
  // taconite gallery: Io error naming it otherwise. ReadWrite makes the table when it is missing.
  static Result<TrackEventLog> open(const std::string& location, Access access = Access::ReadWrite,
                                    int busy_timeout_ms = 2000);
  TrackEventLog(TrackEventLog&&) noexcept;
  TrackEventLog& operator=(TrackEventLog&&) noexcept;
  ~TrackEventLog();

  // The location as messages show it (any password masked).
  const std::string& shown() const;
  // Stores one event; returns its id. Input error for an event that breaks a bound or is not
  // finite/valid UTF-8 where text is expected; Io error when the database refuses.
  Result<std::int64_t> append(const StoredTrackEvent& event);
  // Sets the snapshot path of the track's end event (End), or of its first event with a decided
  // identity: a new or update with label_state known or unknown (Decision). False: no such event
  // of `uid` is stored.
  Result<bool> set_snapshot(const std::string& uid, SnapshotOf which, const std::string& path);
  // The events the filter selects, newest first.
  Result<std::vector<StoredTrackEvent>> query(const TrackEventFilter& filter) const;
  // Retention: keeps at most `max_rows` events (0: no bound by count) and none older than
  // `max_age_s` seconds before `now_epoch_s` (0: no bound by age); returns how many it removed.
  Result<std::size_t> prune(std::size_t max_rows, double max_age_s, double now_epoch_s);
  // How many events are stored.
  Result<std::size_t> count() const;

 private:
  explicit TrackEventLog(std::unique_ptr<EventLogBackend> backend);
  std::unique_ptr<EventLogBackend> backend_;
};

// Checks an event against the bounds above; Input error naming the field.
Status validate_event(const StoredTrackEvent& event);
// Validates a filter (limit bounds, finite times); Input error naming the member.
Status validate_filter(const TrackEventFilter& filter);

// The events as one JSON array (json_write.hpp: valid UTF-8, shortest numbers), each an object of
// the stored columns: id, epoch_s, utc (ISO 8601), camera, kind, uid, track_id, label_state, label,
// label_id, confidence, reason, first_epoch_s, last_epoch_s, dwell_s, frames, snapshot (null when
// none). The published document is left out: the columns already hold what it says, and a list
// of 10000 events stays small.
std::string events_to_json(const std::vector<StoredTrackEvent>& events);
// One event as one JSON object (the same members): one line of `taconite-gallery events --json`.
std::string event_to_json(const StoredTrackEvent& event);

// Unix seconds as ISO 8601 UTC with microseconds ("2026-12-01T12:27:04.879027Z"); "" when the
// value is not finite or outside years 0..9999.
std::string epoch_to_iso(double epoch_s);
// The reverse: "2026-12-01T12:27:04.879027Z", "2026-12-01T12:27:04Z", "2026-12-01T12:27:04+02:00",
// "2026-12-01" (midnight UTC); nullopt for anything else.
std::optional<double> iso_to_epoch(const std::string& text);

}  // namespace taconite::gallery

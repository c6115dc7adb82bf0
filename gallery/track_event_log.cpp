#include "track_event_log.hpp"

#include <cmath>
#include <ctime>
#include <exception>
#include <string_view>

#include "displayed_location.hpp"
#include "gallery_store.hpp"
#include "track_event_log_backend.hpp"
#include "utf8_repair.hpp"

namespace taconite::gallery {

namespace {

// Text columns are stored as valid UTF-8 without NUL (PostgreSQL's text refuses both): a hostile
// label is mended (U+FFFD), never the reason an event is lost.
std::string stored_text(std::string_view text) {
  std::string mended = json::repaired_utf8(text);
  std::string out;
  out.reserve(mended.size());
  for (const char c : mended) {
    if (c == '\0')
      out += json::kReplacementCharacter;
    else
      out += c;
  }
  return out;
}

Status field_bound(const std::string& value, std::size_t bound, const char* field) {
  if (value.size() > bound)
    return Error{ErrorKind::Input, std::string("track event: ") + field + " is " + std::to_string(value.size()) +
                                       " bytes, at most " + std::to_string(bound) + " are stored"};
  return Ok{};
}

Status finite(std::optional<double> value, const char* field) {
  if (value && !std::isfinite(*value))
    return Error{ErrorKind::Input, std::string("track event: ") + field + " is not a finite number"};
  return Ok{};
}

// Guards the public calls: no exception (std::bad_alloc, ...) leaves the library.
template <typename F>
auto guarded(const std::string& shown, F&& call) -> decltype(call()) {
  try {
    return call();
  } catch (const std::exception& e) {
    return Error{ErrorKind::Io, shown + ": event log: " + e.what()};
  }
}

}  // namespace

Status validate_event(const StoredTrackEvent& e) {
  for (const auto& [value, field] : {std::pair{&e.camera, "camera"},
                                     {&e.kind, "kind"},
                                     {&e.uid, "uid"},
                                     {&e.label_state, "label_state"},
                                     {&e.reason, "reason"}})
    if (Status s = field_bound(*value, kMaxEventFieldBytes, field); !s) return s;
  if (e.label)
    if (Status s = field_bound(*e.label, kMaxEventFieldBytes, "label"); !s) return s;
  if (Status s = field_bound(e.snapshot, kMaxEventPathBytes, "snapshot"); !s) return s;
  if (Status s = field_bound(e.document, kMaxEventDocumentBytes, "document"); !s) return s;
  if (e.camera.empty()) return Error{ErrorKind::Input, "track event: camera is empty"};
  if (e.kind.empty()) return Error{ErrorKind::Input, "track event: kind is empty"};
  if (e.uid.empty()) return Error{ErrorKind::Input, "track event: uid is empty"};
  for (const auto& [value, field] : {std::pair{std::optional<double>(e.epoch_s), "epoch_s"},
                                     {e.confidence, "confidence"},
                                     {e.first_epoch_s, "first_epoch_s"},
                                     {e.last_epoch_s, "last_epoch_s"},
                                     {e.dwell_s, "dwell_s"}})
    if (Status s = finite(value, field); !s) return s;
  return Ok{};
}

Status validate_filter(const TrackEventFilter& f) {
  if (f.limit < 1 || f.limit > kMaxEventQueryRows)
    return Error{ErrorKind::Input, "event query: limit " + std::to_string(f.limit) + " is outside 1.." +
                                       std::to_string(kMaxEventQueryRows)};
  if (Status s = finite(f.since_epoch_s, "since"); !s) return s;
  if (Status s = finite(f.until_epoch_s, "until"); !s) return s;
  for (const auto* text : {&f.person, &f.camera, &f.kind, &f.uid})
    if (*text && (*text)->size() > kMaxEventFieldBytes)
      return Error{ErrorKind::Input, "event query: a filter of " + std::to_string((*text)->size()) +
                                         " bytes, at most " + std::to_string(kMaxEventFieldBytes)};
  return Ok{};
}

TrackEventLog::TrackEventLog(std::unique_ptr<EventLogBackend> backend) : backend_(std::move(backend)) {}
TrackEventLog::TrackEventLog(TrackEventLog&&) noexcept = default;
TrackEventLog& TrackEventLog::operator=(TrackEventLog&&) noexcept = default;
TrackEventLog::~TrackEventLog() = default;

Result<TrackEventLog> TrackEventLog::open(const std::string& location, Access access, int busy_timeout_ms) {
  return guarded(displayed_location(location), [&]() -> Result<TrackEventLog> {
    Result<std::unique_ptr<EventLogBackend>> backend = is_postgres_location(location)
                                                           ? open_postgres_event_log(location, access)
                                                           : open_sqlite_event_log(location, access, busy_timeout_ms);
    if (!backend) return backend.error();
    return TrackEventLog(std::move(backend.value()));
  });
}

const std::string& TrackEventLog::shown() const { return backend_->shown(); }

Result<std::int64_t> TrackEventLog::append(const StoredTrackEvent& event) {
  return guarded(shown(), [&]() -> Result<std::int64_t> {
    if (Status s = validate_event(event); !s) return Error{s.error().kind, shown() + ": " + s.error().message};
    StoredTrackEvent stored = event;
    for (std::string* text : {&stored.camera, &stored.kind, &stored.uid, &stored.label_state, &stored.reason,
                              &stored.snapshot, &stored.document})
      *text = stored_text(*text);
    if (stored.label) stored.label = stored_text(*stored.label);
    return backend_->append(stored);
  });
}

Result<bool> TrackEventLog::set_snapshot(const std::string& uid, SnapshotOf which, const std::string& path) {
  return guarded(shown(), [&]() -> Result<bool> {
    if (Status s = field_bound(path, kMaxEventPathBytes, "snapshot"); !s)
      return Error{ErrorKind::Input, shown() + ": " + s.error().message};
    if (Status s = field_bound(uid, kMaxEventFieldBytes, "uid"); !s)
      return Error{ErrorKind::Input, shown() + ": " + s.error().message};
    return backend_->set_snapshot(stored_text(uid), which, stored_text(path));
  });
}

Result<std::vector<StoredTrackEvent>> TrackEventLog::query(const TrackEventFilter& filter) const {
  return guarded(shown(), [&]() -> Result<std::vector<StoredTrackEvent>> {
    if (Status s = validate_filter(filter); !s) return Error{ErrorKind::Input, shown() + ": " + s.error().message};
    return backend_->query(filter);
  });
}

Result<std::size_t> TrackEventLog::prune(std::size_t max_rows, double max_age_s, double now_epoch_s) {
  return guarded(shown(), [&]() -> Result<std::size_t> {
    if (!std::isfinite(max_age_s) || max_age_s < 0 || !std::isfinite(now_epoch_s))
      return Error{ErrorKind::Input, shown() + ": event retention: the age bound must be finite and >= 0"};
    return backend_->prune(max_rows, max_age_s > 0 ? now_epoch_s - max_age_s : 0.0);
  });
}

Result<std::size_t> TrackEventLog::count() const {
  return guarded(shown(), [&]() { return backend_->count(); });
}

}  // namespace taconite::gallery

// The event log of a build without libpq: a PostgreSQL gallery is refused saying how to get it.
#include "displayed_location.hpp"
#include "track_event_log_backend.hpp"

namespace taconite::gallery {

Result<std::unique_ptr<EventLogBackend>> open_postgres_event_log(const std::string& location, TrackEventLog::Access) {
  return Error{ErrorKind::Input, displayed_location(location) +
                                     ": this taconite was built without PostgreSQL support (libpq; rebuild with "
                                     "libpq-dev and -Dpostgresql=enabled)"};
}

}  // namespace taconite::gallery

// A taconite-tracks/1 document (docs/tracks-message.md) as taconitepublish method=bus posts it,
// parsed into the TrackEvent the observers get.
#pragma once

#include <string>

#include "pipeline_observer.hpp"
#include "taconite/error.hpp"

namespace taconite::app {

// The event of `document`. epoch_s is the document's `epoch_s` when present, else computed from its
// ISO `utc`; first/last_epoch_s likewise from `first_epoch_s` / `first_utc` (end events only).
// An Input error saying what is wrong for text that is not such an event.
Result<TrackEvent> parse_track_event(const std::string& document);

// Seconds since 1970 of an ISO 8601 time with a zone ("2026-12-01T12:27:04.879027Z"), or an error.
Result<double> iso_to_epoch_s(const std::string& iso);

}  // namespace taconite::app

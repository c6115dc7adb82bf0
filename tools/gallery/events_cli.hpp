// taconite-gallery events: the event history (gallery/track_event_log.hpp) of a gallery, newest
// first, as a table or JSON lines, filtered by person, camera, kind and time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "track_event_log.hpp"

namespace taconite::gallery_cli {

// --since/--until take a duration back from now up to this many seconds (a century).
inline constexpr std::int64_t kMaxEventAgeSeconds = 36500LL * 86400;

// "7d", "12h", "30m", "45s" (a whole count, back from `now_epoch_s`) or an ISO 8601 time
// (gallery::iso_to_epoch); nullopt for anything else.
std::optional<double> parse_event_time(const std::string& text, double now_epoch_s);

// `taconite-gallery events GALLERY [options]`: argv[1] is "events". Prints the events; returns the
// exit code (0 ok, 1 error with one line on stderr, 2 usage).
int events_command(int argc, char** argv);

}  // namespace taconite::gallery_cli

// taconite-run's log: one line per event of note on stderr (journald takes stderr under systemd).
#pragma once

#include <string_view>

namespace taconite::app {

// Writes `line` (its own newlines made spaces) and a newline to stderr in one write, so lines of two
// threads never interleave.
void log_line(std::string_view line);

}  // namespace taconite::app

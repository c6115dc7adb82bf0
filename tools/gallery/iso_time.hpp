// Unix milliseconds as ISO 8601 UTC text (taconite-gallery unknowns, contact-sheet captions).
// A stored time is any int64 (a tampered or corrupt row included), so the conversion is exact for
// every value with a four-digit year and says "invalid" for the rest instead of printing garbage.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace taconite::gallery_cli {

// 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the times that have an ISO 8601 text
// of four-digit years.
inline constexpr std::int64_t kEarliestIsoMs = -62167219200000;
inline constexpr std::int64_t kLatestIsoMs = 253402300799999;

// "2026-12-01T10:15:02.250Z" (floor division: -5 ms is 1969-12-31T23:59:59.995Z); nullopt
// outside kEarliestIsoMs..kLatestIsoMs.
std::optional<std::string> iso_utc(std::int64_t unix_ms);

// iso_utc's text, or "invalid time (N ms)" where it has none.
std::string iso_utc_or_invalid(std::int64_t unix_ms);

}  // namespace taconite::gallery_cli

// One track event as a JSON line, schema "taconite-tracks/1" (docs/tracks-message.md).
#pragma once

#include <string>

#include "track_book.hpp"

namespace taconite::json {
struct Repairs;
}

namespace taconite::gst {

inline constexpr const char* kTracksSchema = "taconite-tracks/1";

// Written by json_write.hpp: valid JSON whatever the strings hold; a string that is not UTF-8 (a
// label set upstream) is written with U+FFFD and counted in `repairs` when given.
std::string track_event_document(const TrackEvent& event, const std::string& stream,
                                 json::Repairs* repairs = nullptr);

}  // namespace taconite::gst

// One track event as a JSON line, schema "taconite-tracks/1" (docs/tracks-message.md).
#pragma once

#include <string>

#include "track_book.hpp"

namespace taconite::gst {

inline constexpr const char* kTracksSchema = "taconite-tracks/1";

std::string track_event_document(const TrackEvent& event, const std::string& stream);

}  // namespace taconite::gst

// The per-track elements' side of taconitetrack's "taconite-tracks-ended" event
// (gst/meta/gst/taconite/gsttaconitetracks.h): the tracks it names, read once into plain values.
// A track whose ROIs carry a uid (only taconitetrack writes one) is owned by the tracker: a
// consumer ends it on this event and never times it out itself; a track without a uid keeps the
// consumer's own timeout (no tracker upstream, or another one such as DL Streamer's gvatrack).
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace taconite::gst {

struct EndedTrack {
  std::int64_t id = 0;
  std::string uid;  // empty when the tracker gave none
};

struct TracksEnded {
  std::string reason;  // "lost", "scene-cut", "reset"
  std::vector<EndedTrack> tracks;
};

// The tracks `event` ends; none when it is not a well-formed tracks-ended event.
std::optional<TracksEnded> tracks_ended(GstEvent* event);

// Whether the ROI's track is owned by taconitetrack (its "object_id" param carries a "uid").
bool tracker_owned(const GstVideoRegionOfInterestMeta* roi);

}  // namespace taconite::gst

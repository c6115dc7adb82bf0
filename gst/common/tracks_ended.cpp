#include "tracks_ended.hpp"

#include <gst/taconite/gsttaconiteroi.h>
#include <gst/taconite/gsttaconitetracks.h>

namespace taconite::gst {

std::optional<TracksEnded> tracks_ended(GstEvent* event) {
  if (!gst_taconite_event_is_tracks_ended(event)) return std::nullopt;  // NULL-safe, checks the type too
  TracksEnded ended;
  const gchar* reason = gst_taconite_tracks_ended_event_get_reason(event);
  ended.reason = reason ? reason : "lost";
  const guint n = gst_taconite_tracks_ended_event_get_size(event);  // at most GST_TACONITE_TRACKS_ENDED_MAX
  ended.tracks.reserve(n);
  for (guint i = 0; i < n; ++i) {
    gint64 id = 0;
    const gchar* uid = nullptr;
    if (gst_taconite_tracks_ended_event_get_track(event, i, &id, &uid)) ended.tracks.push_back({id, uid ? uid : ""});
  }
  return ended;
}

bool tracker_owned(const GstVideoRegionOfInterestMeta* roi) {
  return roi && gst_taconite_roi_get_track_uid(roi) != nullptr;
}

}  // namespace taconite::gst

// Writes a ROI's tracking id where taconiteadaface (track-id-param, default) and DL Streamer read
// it: a ROI param structure "object_id" with an integer field "id".
#pragma once

#include <gst/video/video.h>

#include <optional>

namespace taconite::gst {

inline constexpr const char* kObjectIdParam = "object_id";

// Sets the ROI's "object_id" param to `id` (a G_TYPE_INT, or G_TYPE_INT64 for ids beyond
// G_MAXINT, so none wraps), or removes it when there is no id. Returns whether the params changed.
// The ROI's buffer must be writable.
bool set_roi_track_id(GstVideoRegionOfInterestMeta* roi, std::optional<gint64> id);

// Whether the ROI carries an "object_id" param (so clearing it would change the buffer).
bool has_roi_track_id_param(const GstVideoRegionOfInterestMeta* roi);

}  // namespace taconite::gst

// A ROI's tracking id: written where taconiteadaface (track-id-param, default) and DL Streamer read
// it (a ROI param structure "object_id" with an integer field "id"), and read back; thin std::optional
// wrappers of the metadata library's gst_taconite_roi_set_track_id / gst_taconite_roi_get_track_id_from.
#pragma once

#include <gst/video/video.h>

#include <optional>
#include <string>
#include <vector>

#include "face_selection.hpp"

namespace taconite::gst {

inline constexpr const char* kObjectIdParam = "object_id";

// Sets the ROI's "object_id" param to `id` (a G_TYPE_INT, or G_TYPE_INT64 for ids beyond
// G_MAXINT, so none wraps) and its string field "uid" to `uid` (an empty `uid` removes a stale
// one), or removes the param when there is no id. Returns whether the params changed.
// The ROI's buffer must be writable.
bool set_roi_track_id(GstVideoRegionOfInterestMeta* roi, std::optional<gint64> id, const std::string& uid = {});

// Whether the ROI carries an "object_id" param (so clearing it would change the buffer).
bool has_roi_track_id_param(const GstVideoRegionOfInterestMeta* roi);

// The tracking id of a ROI: a structure named `id_param` with an integer field "id" (DL Streamer's
// "object_id"), or an integer field named `id_param` in any structure.
std::optional<gint64> roi_track_id(const GstVideoRegionOfInterestMeta* roi, const std::string& id_param);

// The tracking id of each face of one frame (none for whole-buffer faces). An id carried by
// more than one ROI of the frame names no single face: those faces are all treated as untracked,
// so one face's cached embedding is never attached to another.
std::vector<std::optional<gint64>> frame_track_ids(const std::vector<FaceJob>& faces, const std::string& id_param);

}  // namespace taconite::gst

// The ROI params the face elements write for each other: 5 (or 68) landmark points and a
// detection's confidence, in the layouts taconiteadaface, taconitepublish and DL Streamer-style
// consumers read (docs/gstreamer.md).
#pragma once

#include <gst/video/video.h>

#include <optional>
#include <span>
#include <vector>

#include "similarity_alignment.hpp"

namespace taconite::gst {

// A structure `name` with `x` and `y` arrays of the points' doubles (frame pixels).
GstStructure* points_structure(const char* name, std::span<const vision::Point2> points);

// Replaces the ROI's param structures named like `s` (if any) by `s` (taken), at the end of its params.
void replace_roi_param(GstVideoRegionOfInterestMeta* roi, GstStructure* s);

// Adds a `detection` param: the detector's `confidence` (0..1) and `label` "face". Returns it (owned
// by the ROI) for more fields.
GstStructure* add_detection_param(GstVideoRegionOfInterestMeta* roi, double confidence);

// True when the ROI's `detection` param says its box was not measured by a detector on this frame:
// predicted by a tracker (`predicted`=TRUE), or carried from an earlier frame (`fresh`=FALSE), which
// a tracker should have predicted or removed. Both absent means measured.
bool roi_predicted(const GstVideoRegionOfInterestMeta* roi);

// taconiteadaface's best-shot quality of the face (its "quality" param): the embedding's score (with
// AdaFace's norm) when it has one, else this frame's pre-embedding score; empty without either.
std::optional<double> roi_quality(const GstVideoRegionOfInterestMeta* roi);

// The `count` lowest positive ROI ids that no ROI meta of `buffer` has (whatever ids, G_MAXINT
// included, its ROIs carry), ascending. There are fewer ROIs than positive ints, so there are enough.
std::vector<gint> unused_roi_ids(GstBuffer* buffer, std::size_t count);

}  // namespace taconite::gst

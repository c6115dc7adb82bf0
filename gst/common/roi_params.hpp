// Thin C++ forms of the metadata library's face contract (gst/taconite/gsttaconiteface.h) where
// the elements repeat them: points from vision's Point2, the quality as an optional; and the ROI
// ids a new face ROI may take.
#pragma once

#include <gst/video/video.h>

#include <optional>
#include <span>
#include <vector>

#include "similarity_alignment.hpp"

namespace taconite::gst {

// A structure `name` with `x` and `y` arrays of the points' doubles (frame pixels); null when a
// point is not finite or there are none or more than 1024 (gst_taconite_points_params_new).
GstStructure* points_structure(const char* name, std::span<const vision::Point2> points);

// Replaces the ROI's params named `name` by the points (points_structure); false, changing nothing,
// when points_structure refuses them.
bool set_roi_points(GstVideoRegionOfInterestMeta* roi, const char* name, std::span<const vision::Point2> points);

// taconiteadaface's best-shot quality of the face (gst_taconite_roi_get_quality): the embedding's
// score when it has one, else this frame's pre-embedding score; empty without either.
std::optional<double> roi_quality(const GstVideoRegionOfInterestMeta* roi);

// The `count` lowest positive ROI ids that no ROI meta of `buffer` has (whatever ids, G_MAXINT
// included, its ROIs carry), ascending. There are fewer ROIs than positive ints, so there are enough.
std::vector<gint> unused_roi_ids(GstBuffer* buffer, std::size_t count);

}  // namespace taconite::gst

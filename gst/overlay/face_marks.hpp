// What taconiteoverlay draws of one face ROI, read from its params with the metadata library's
// typed accessors: the box, the 5 landmarks, the track id and the identity (label, confidence,
// label_state).
#pragma once

#include <gst/taconite/gsttaconiteroi.h>
#include <gst/video/video.h>

#include <optional>
#include <string>
#include <vector>

#include "roi_landmarks.hpp"

namespace taconite::gst {

// The identity state of a face (gst_taconite_roi_get_label_state): NONE without an `identity`
// param (no taconiteidentify upstream, or an untracked face), PENDING while the track votes,
// KNOWN or UNKNOWN once decided.
using LabelState = GstTaconiteLabelState;

struct FaceMark {
  gint64 x = 0, y = 0, width = 0, height = 0;  // the ROI box, frame pixels
  std::vector<Point2> landmarks;               // 0, 2 or 5 points, frame pixels, unchecked
  std::optional<gint64> track_id;
  LabelState state = GST_TACONITE_LABEL_STATE_NONE;
  std::string label;                // empty when undecided
  std::optional<double> confidence;  // the decided identity's
};

// The ROI as the overlay draws it (an `identity` param without `label_state`, written before that
// field existed, is read as gst_taconite_roi_get_label_state says).
FaceMark read_face_mark(const GstVideoRegionOfInterestMeta* roi);

// The label text: "#<track> <name> <confidence with 2 decimals>", each part when known ("pending"
// for the name while voting). Printable ASCII only (the Hershey fonts have nothing else: other
// bytes become '?'), at most `max_chars` characters.
std::string face_label_text(const FaceMark& mark, std::size_t max_chars);

}  // namespace taconite::gst

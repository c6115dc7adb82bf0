// What taconiteoverlay draws of one face ROI, read from its params: the box, the 5 landmarks, the
// track id and the identity (label, confidence, label_state). A small reader until the metadata
// library's typed accessors replace it.
#pragma once

#include <gst/video/video.h>

#include <optional>
#include <string>
#include <vector>

#include "roi_landmarks.hpp"

namespace taconite::gst {

// The identity state of a face, as taconiteidentify's `identity` param says it (label_state).
enum class LabelState {
  None,     // no `identity` param: no taconiteidentify upstream, or an untracked face
  Pending,  // the track is still voting
  Known,    // decided: a gallery identity
  Unknown,  // decided: no gallery identity
};

struct FaceMark {
  gint64 x = 0, y = 0, width = 0, height = 0;  // the ROI box, frame pixels
  std::vector<Point2> landmarks;               // 0, 2 or 5 points, frame pixels, unchecked
  std::optional<gint64> track_id;
  LabelState state = LabelState::None;
  std::string label;                // empty when undecided
  std::optional<double> confidence;  // the decided identity's
};

// The ROI as the overlay draws it. An `identity` param without `label_state` (written before that
// field existed) counts as decided: unknown for the label "unknown" or a negative label_id, else known.
FaceMark read_face_mark(const GstVideoRegionOfInterestMeta* roi);

// The label text: "#<track> <name> <confidence with 2 decimals>", each part when known ("pending"
// for the name while voting). Printable ASCII only (the Hershey fonts have nothing else: other
// bytes become '?'), at most `max_chars` characters.
std::string face_label_text(const FaceMark& mark, std::size_t max_chars);

}  // namespace taconite::gst

// What a snapshot shows: the kept frame with every tracked face boxed thinly and the event's face
// boxed in its identity's colour (green known, orange unknown, yellow otherwise) and labelled.
#pragma once

#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "kept_frames.hpp"

namespace taconite::app {

// The label drawn over the face: "alice 0.83", "unknown", "track 4" (OpenCV's font draws ASCII
// only: other bytes become '?'; at most 48 characters).
std::string snapshot_label(const std::string& label_state, const std::optional<std::string>& label,
                           const std::optional<double>& confidence, std::int64_t track_id);

// A BGR picture of `frame` (an RGB copy) with the boxes drawn; `face` is the event's.
cv::Mat draw_snapshot(const KeptFrame& frame, const KeptFace& face, const std::string& label_state,
                      const std::string& label);

// The colour (BGR) the event's box is drawn in for a label state.
cv::Scalar identity_colour(const std::string& label_state);

}  // namespace taconite::app

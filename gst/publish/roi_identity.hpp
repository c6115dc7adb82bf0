// taconiteidentify's answer on a face ROI as the track events keep it: its label_state, and label /
// label_id / confidence once decided, read with the metadata library's typed accessors.
#pragma once

#include <gst/video/video.h>

#include <optional>
#include <string>

namespace taconite::gst {

struct RoiIdentity {
  std::string label_state;  // "pending", "known" or "unknown"; empty when the param does not say
  std::optional<std::string> label;
  std::optional<gint> label_id;
  std::optional<double> confidence;

  bool operator==(const RoiIdentity&) const = default;
};

// The ROI's identity, or nothing without one (no taconiteidentify in the pipeline).
std::optional<RoiIdentity> roi_identity(const GstVideoRegionOfInterestMeta* roi);

}  // namespace taconite::gst

#include "roi_detection.hpp"

#include <gst/taconite/gsttaconiteface.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "roi_landmarks.hpp"
#include "roi_params.hpp"

namespace taconite::gst {

namespace {

// Whether the ROI's detection param has a confidence field at all (of whatever type).
bool detection_has_confidence_field(const GstVideoRegionOfInterestMeta* roi) {
  const GstStructure* s =
      gst_video_region_of_interest_meta_get_param(const_cast<GstVideoRegionOfInterestMeta*>(roi), "detection");
  return s && gst_structure_has_field(s, "confidence");
}

}  // namespace

vision::Detection roi_detection(const GstVideoRegionOfInterestMeta* roi, const vision::Box& box) {
  vision::Detection detection{box};
  if (!gst_taconite_roi_has_param(roi, "detection")) return detection;  // facedetect's: no confidence, trusted
  gdouble confidence = 0.0;
  if (gst_taconite_roi_get_detection_confidence(roi, &confidence))
    detection.confidence = confidence;
  else if (detection_has_confidence_field(roi))
    detection.confidence = 0.0;  // one that is no finite number never passes a threshold
  // (a detection param without a confidence keeps 1: trusted, as documented)
  gboolean fresh = TRUE;
  if (gst_taconite_roi_get_fresh(roi, &fresh)) detection.fresh = fresh;
  return detection;
}

bool move_roi_to_prediction(GstVideoRegionOfInterestMeta* roi, const vision::Box& measured, const vision::Box& predicted,
                            const GstVideoInfo& info) {
  const std::optional<vision::Box> visible = vision::inside(
      predicted, {0.0, 0.0, static_cast<double>(GST_VIDEO_INFO_WIDTH(&info)), static_cast<double>(GST_VIDEO_INFO_HEIGHT(&info))});
  if (!visible || !(measured.width > 0 && measured.height > 0)) return false;

  std::vector<Point2> landmarks = roi_landmarks(roi);
  const double sx = predicted.width / measured.width, sy = predicted.height / measured.height;
  for (Point2& p : landmarks) p = {predicted.x + (p.x - measured.x) * sx, predicted.y + (p.y - measured.y) * sy};
  if (!landmarks.empty()) set_roi_points(roi, "landmarks", landmarks);

  // Rounded edges, so the box never reaches past the frame.
  const long x = std::lround(visible->x), y = std::lround(visible->y);
  roi->x = static_cast<guint>(x);
  roi->y = static_cast<guint>(y);
  roi->w = static_cast<guint>(std::max(1L, std::lround(visible->x + visible->width) - x));
  roi->h = static_cast<guint>(std::max(1L, std::lround(visible->y + visible->height) - y));
  gst_taconite_roi_set_predicted(roi, TRUE);  // only on a detector's param: facedetect's boxes have none
  return true;
}

}  // namespace taconite::gst

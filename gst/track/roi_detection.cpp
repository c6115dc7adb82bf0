#include "roi_detection.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "roi_landmarks.hpp"
#include "roi_params.hpp"

namespace taconite::gst {

vision::Detection roi_detection(const GstVideoRegionOfInterestMeta* roi, const vision::Box& box) {
  vision::Detection detection{box};
  const GstStructure* s =
      gst_video_region_of_interest_meta_get_param(const_cast<GstVideoRegionOfInterestMeta*>(roi), "detection");
  if (!s) return detection;
  double confidence = 1.0;
  if (gst_structure_get_double(s, "confidence", &confidence)) detection.confidence = std::isfinite(confidence) ? confidence : 0.0;
  gboolean fresh = TRUE;
  if (gst_structure_get_boolean(s, "fresh", &fresh)) detection.fresh = fresh;
  return detection;
}

bool move_roi_to_prediction(GstVideoRegionOfInterestMeta* roi, const vision::Box& measured, const vision::Box& predicted,
                            const GstVideoInfo& info) {
  const double left = std::max(predicted.x, 0.0), top = std::max(predicted.y, 0.0);
  const double right = std::min(predicted.x + predicted.width, static_cast<double>(GST_VIDEO_INFO_WIDTH(&info)));
  const double bottom = std::min(predicted.y + predicted.height, static_cast<double>(GST_VIDEO_INFO_HEIGHT(&info)));
  // NaN fails every comparison: a prediction that is not finite moves nothing.
  if (!(right - left >= 1.0 && bottom - top >= 1.0) || !(measured.width > 0 && measured.height > 0)) return false;

  std::vector<Point2> landmarks = roi_landmarks(roi);
  const double sx = predicted.width / measured.width, sy = predicted.height / measured.height;
  for (Point2& p : landmarks) p = {predicted.x + (p.x - measured.x) * sx, predicted.y + (p.y - measured.y) * sy};
  if (!landmarks.empty()) replace_roi_param(roi, points_structure("landmarks", landmarks));

  // Rounded edges, so the box never reaches past the frame.
  const long x = std::lround(left), y = std::lround(top);
  roi->x = static_cast<guint>(x);
  roi->y = static_cast<guint>(y);
  roi->w = static_cast<guint>(std::max(1L, std::lround(right) - x));
  roi->h = static_cast<guint>(std::max(1L, std::lround(bottom) - y));
  if (GstStructure* s = gst_video_region_of_interest_meta_get_param(roi, "detection"))
    gst_structure_set(s, "predicted", G_TYPE_BOOLEAN, TRUE, nullptr);
  return true;
}

}  // namespace taconite::gst

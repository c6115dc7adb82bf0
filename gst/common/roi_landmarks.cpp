#include "roi_landmarks.hpp"

#include <gst/taconite/gsttaconiteroi.h>

namespace taconite::gst {

std::vector<Point2> roi_landmarks(const GstVideoRegionOfInterestMeta* roi) {
  gdouble *x = nullptr, *y = nullptr;
  guint n = 0;
  std::vector<Point2> points;
  if (!gst_taconite_roi_get_landmarks(roi, &x, &y, &n)) return points;
  if (n == 2 || n == 5)  // the eyes, or the template's five
    for (guint i = 0; i < n; ++i) points.push_back({x[i], y[i]});
  g_free(x);
  g_free(y);
  return points;
}

std::optional<cv::Matx23d> roi_alignment(const GstVideoRegionOfInterestMeta* roi, int frame_width, int frame_height,
                                         int width, int height, std::string* rejected) {
  const std::vector<Point2> landmarks = roi_landmarks(roi);
  if (landmarks.empty()) return std::nullopt;
  Result<cv::Matx23d> checked = vision::checked_alignment(landmarks, frame_width, frame_height, width, height);
  if (checked) return checked.value();
  *rejected = checked.error().message;
  return std::nullopt;
}

}  // namespace taconite::gst

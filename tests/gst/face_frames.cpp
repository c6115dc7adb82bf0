#include "face_frames.hpp"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdlib>

#include "gst_test_support.hpp"

namespace gsttest {

GstBuffer* astronaut_rgb(int* width, int* height, double zoom) {
  const char* path = std::getenv("TACONITE_TEST_ASTRONAUT");
  if (!path || !*path) return nullptr;
  cv::Mat bgr = cv::imread(path, cv::IMREAD_COLOR);
  if (bgr.empty()) return nullptr;
  if (zoom != 1.0) cv::resize(bgr, bgr, cv::Size(), zoom, zoom, cv::INTER_LINEAR);
  *width = bgr.cols;
  *height = bgr.rows;
  return rgb_buffer(bgr.cols, bgr.rows, [&](int x, int y) {
    const cv::Vec3b p = bgr.at<cv::Vec3b>(y, x);
    return std::array<std::uint8_t, 3>{p[2], p[1], p[0]};
  });
}

std::string video_caps(const char* format, int width, int height) {
  return std::string("video/x-raw,format=") + format + ",width=" + std::to_string(width) +
         ",height=" + std::to_string(height) + ",framerate=30/1";
}

std::vector<GstVideoRegionOfInterestMeta*> rois_of(GstBuffer* buffer) {
  std::vector<GstVideoRegionOfInterestMeta*> rois;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    rois.push_back(reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta));
  return rois;
}

std::vector<Pt> roi_points(GstVideoRegionOfInterestMeta* roi, const char* name) {
  GstStructure* s = gst_video_region_of_interest_meta_get_param(roi, name);
  std::vector<Pt> out;
  if (!s) return out;
  const GValue* xs = gst_structure_get_value(s, "x");
  const GValue* ys = gst_structure_get_value(s, "y");
  if (!xs || !ys || !GST_VALUE_HOLDS_ARRAY(xs) || !GST_VALUE_HOLDS_ARRAY(ys)) return out;
  for (guint i = 0; i < gst_value_array_get_size(xs) && i < gst_value_array_get_size(ys); ++i)
    out.push_back({g_value_get_double(gst_value_array_get_value(xs, i)),
                   g_value_get_double(gst_value_array_get_value(ys, i))});
  return out;
}

}  // namespace gsttest

#include "face_landmarks.hpp"

#include <dlib/image_processing.h>
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/opencv/cv_image.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <glib/gstdio.h>
#include <map>
#include <mutex>
#include <opencv2/imgproc.hpp>

#include "face_preprocess.hpp"

namespace taconite::gst {

namespace {

// Formats whose first plane is the luma (or gray) image, read in place.
bool has_luma_plane(const GstVideoFrame& frame) {
  const GstVideoFormat format = GST_VIDEO_FRAME_FORMAT(&frame);
  return format == GST_VIDEO_FORMAT_I420 || format == GST_VIDEO_FORMAT_NV12 || format == GST_VIDEO_FORMAT_GRAY8;
}

// The luma plane as an 8-bit image header over the mapped memory (the mapped frame's stride; no copy).
cv::Mat luma_view(const GstVideoFrame& frame) {
  return cv::Mat(GST_VIDEO_FRAME_HEIGHT(&frame), GST_VIDEO_FRAME_WIDTH(&frame), CV_8UC1,
                 GST_VIDEO_FRAME_PLANE_DATA(&frame, 0),
                 static_cast<std::size_t>(GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0)));
}

// The gray pixels of `area` (inside the frame, not empty): a view for luma formats, else converted.
cv::Mat gray_area(const GstVideoFrame& frame, const cv::Rect& area) {
  if (has_luma_plane(frame)) return luma_view(frame)(area);
  cv::Mat gray;
  cv::cvtColor(extract_rgb(frame, area), gray, cv::COLOR_RGB2GRAY);
  return gray;
}

}  // namespace

std::array<Point2, 5> FaceLandmarks::five() const {
  auto mean = [this](int first, int last) {
    Point2 m;
    for (int i = first; i <= last; ++i) m.x += points[i].x, m.y += points[i].y;
    const int n = last - first + 1;
    return Point2{m.x / n, m.y / n};
  };
  return {mean(36, 41), mean(42, 47), points[30], points[48], points[54]};
}

struct LandmarkModel::Impl {
  dlib::shape_predictor predictor;
};

LandmarkModel::LandmarkModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LandmarkModel::~LandmarkModel() = default;

std::shared_ptr<const LandmarkModel> LandmarkModel::load(const std::string& path, std::string* problem) {
  if (path.empty()) {
    *problem = "no landmark model file is set";
    return nullptr;
  }
  // Elements share a loaded model while one holds it (dlib's 68-point model takes ~100 MB and about
  // a second to load); keyed by the file's size and modification time too, so a replaced file reloads.
  static std::mutex cache_lock;
  static std::map<std::string, std::weak_ptr<const LandmarkModel>> cache;
  GStatBuf info;
  const std::string key = g_stat(path.c_str(), &info) == 0 ? path + "|" + std::to_string(info.st_size) + "|" +
                                                                 std::to_string(info.st_mtime)
                                                           : std::string();
  std::lock_guard<std::mutex> guard(cache_lock);
  if (!key.empty())
    if (auto shared = cache[key].lock()) return shared;
  if (!g_file_test(path.c_str(), G_FILE_TEST_EXISTS)) {
    *problem = "the landmark model " + path + " does not exist (Debian: apt install libdlib-data)";
    return nullptr;
  }
  if (!g_file_test(path.c_str(), G_FILE_TEST_IS_REGULAR)) {
    *problem = "the landmark model " + path + " is not a regular file";
    return nullptr;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *problem = "the landmark model " + path + " cannot be read: " + std::strerror(errno);
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  try {
    dlib::deserialize(impl->predictor, file);
  } catch (const std::exception& e) {
    *problem = "the landmark model " + path + " is not a dlib shape predictor: " + e.what();
    return nullptr;
  } catch (...) {
    *problem = "the landmark model " + path + " is not a dlib shape predictor";
    return nullptr;
  }
  if (impl->predictor.num_parts() != 68) {
    *problem = "the landmark model " + path + " predicts " + std::to_string(impl->predictor.num_parts()) +
               " points, expected dlib's 68-point markup";
    return nullptr;
  }
  std::shared_ptr<const LandmarkModel> model(new LandmarkModel(std::move(impl)));
  std::erase_if(cache, [](const auto& entry) { return entry.second.expired(); });
  if (!key.empty()) cache[key] = model;
  return model;
}

FaceLandmarks LandmarkModel::predict(const GstVideoFrame& frame, const FaceBox& box) const {
  // The predictor samples pixels around the box's mean shape; a quarter of the box on each side
  // covers them, so packed formats convert only that much (clipped to the frame).
  const gint64 fw = GST_VIDEO_FRAME_WIDTH(&frame), fh = GST_VIDEO_FRAME_HEIGHT(&frame);
  const gint64 x0 = std::clamp<gint64>(box.x - box.width / 4, 0, fw - 1);
  const gint64 y0 = std::clamp<gint64>(box.y - box.height / 4, 0, fh - 1);
  const gint64 x1 = std::clamp<gint64>(box.x + box.width + box.width / 4, x0 + 1, fw);
  const gint64 y1 = std::clamp<gint64>(box.y + box.height + box.height / 4, y0 + 1, fh);
  const bool luma = has_luma_plane(frame);
  const cv::Mat gray = luma ? luma_view(frame)
                            : gray_area(frame, cv::Rect(static_cast<int>(x0), static_cast<int>(y0),
                                                        static_cast<int>(x1 - x0), static_cast<int>(y1 - y0)));
  const gint64 ox = luma ? 0 : x0, oy = luma ? 0 : y0;
  // dlib reads pixels outside its image as 0, so a box reaching outside the frame is safe.
  const dlib::rectangle rect(box.x - ox, box.y - oy, box.x + box.width - 1 - ox, box.y + box.height - 1 - oy);
  const dlib::full_object_detection shape = impl_->predictor(dlib::cv_image<unsigned char>(gray), rect);
  FaceLandmarks out;
  for (unsigned long i = 0; i < out.points.size(); ++i)
    out.points[i] = {static_cast<double>(shape.part(i).x() + ox), static_cast<double>(shape.part(i).y() + oy)};
  return out;
}

struct FaceDetector::Impl {
  dlib::frontal_face_detector detector = dlib::get_frontal_face_detector();
};

FaceDetector::FaceDetector() : impl_(std::make_unique<Impl>()) {}
FaceDetector::~FaceDetector() = default;

std::vector<FaceDetection> FaceDetector::detect(const GstVideoFrame& frame, double scale) {
  const int fw = GST_VIDEO_FRAME_WIDTH(&frame), fh = GST_VIDEO_FRAME_HEIGHT(&frame);
  cv::Mat gray = gray_area(frame, cv::Rect(0, 0, fw, fh));
  if (scale < 1.0) {
    cv::Mat scaled;
    cv::resize(gray, scaled, cv::Size(std::max(1, static_cast<int>(std::lround(fw * scale))),
                                      std::max(1, static_cast<int>(std::lround(fh * scale)))),
               0, 0, cv::INTER_AREA);
    gray = scaled;
  }
  const double to_frame_x = static_cast<double>(fw) / gray.cols, to_frame_y = static_cast<double>(fh) / gray.rows;
  std::vector<dlib::rect_detection> found;
  impl_->detector(dlib::cv_image<unsigned char>(gray), found);
  std::vector<FaceDetection> out;
  for (const dlib::rect_detection& d : found) {
    const gint64 x = std::llround(d.rect.left() * to_frame_x), y = std::llround(d.rect.top() * to_frame_y);
    out.push_back({{x, y, std::llround((d.rect.right() + 1) * to_frame_x) - x,
                    std::llround((d.rect.bottom() + 1) * to_frame_y) - y},
                   d.detection_confidence});
  }
  return out;
}

}  // namespace taconite::gst

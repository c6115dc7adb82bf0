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
#include <numbers>
#include <opencv2/imgproc.hpp>

#include "face_preprocess.hpp"

namespace taconite::gst {

namespace {

// Tilts (eye line against the horizontal) from which landmarks are refined on an upright copy.
constexpr double kRefineTiltRadians = 10.0 * std::numbers::pi / 180.0;

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

  // The 68 points of the face in `box` (frame pixels) found on `gray`, in frame pixels: `back`
  // maps a gray pixel to frame pixels relative to `origin` (the gray image's frame position).
  FaceLandmarks shape(const cv::Mat& gray, const FaceBox& box, Point2 origin, const cv::Matx23d& back) const {
    // dlib reads pixels outside its image as 0, so a box reaching outside the frame is safe.
    const auto ox = static_cast<long>(origin.x), oy = static_cast<long>(origin.y);
    const dlib::rectangle rect(box.x - ox, box.y - oy, box.x + box.width - 1 - ox, box.y + box.height - 1 - oy);
    const dlib::full_object_detection found = predictor(dlib::cv_image<unsigned char>(gray), rect);
    FaceLandmarks out;
    for (unsigned long i = 0; i < out.points.size(); ++i) {
      const double u = found.part(i).x(), v = found.part(i).y();
      out.points[i] = {back(0, 0) * u + back(0, 1) * v + back(0, 2) + origin.x,
                       back(1, 0) * u + back(1, 1) * v + back(1, 2) + origin.y};
    }
    return out;
  }
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

FaceLandmarks LandmarkModel::predict(const GstVideoFrame& frame, const FaceBox& box, int samples) const {
  // The cascade starts from an upright mean face and drifts on faces tilted much beyond 15 degrees
  // (a 30-degree roll put points 10-25 % of the eye distance off). A tilted first answer is
  // therefore redone on a copy of the face's surroundings turned upright.
  const FaceLandmarks first = predict_upright(frame, box);
  const auto five = first.five();
  const double tilt = std::atan2(five[1].y - five[0].y, five[1].x - five[0].x);
  const bool tilted = std::abs(tilt) >= kRefineTiltRadians;
  samples = std::clamp(samples, 1, kMaxBoxSamples);
  if (samples == 1) return tilted ? predict_derotated(frame, box, tilt) : first;
  // Each answer depends on the box to a few % of the eye distance; averaging the answers on the
  // box and on copies shifted by 6 % of its size cancels much of that (measured in
  // tests/gst/alignment_quality_test.cpp).
  const gint64 dx = std::max<gint64>(1, box.width * 6 / 100), dy = std::max<gint64>(1, box.height * 6 / 100);
  const std::array<std::array<gint64, 2>, kMaxBoxSamples> shifts{{{0, 0}, {dx, 0}, {-dx, 0}, {0, dy}, {0, -dy}}};
  FaceLandmarks mean;
  mean.points.fill({});
  for (int i = 0; i < samples; ++i) {
    const FaceBox shifted{box.x + shifts[i][0], box.y + shifts[i][1], box.width, box.height};
    const FaceLandmarks one = i == 0 && !tilted ? first
                              : tilted          ? predict_derotated(frame, shifted, tilt)
                                                : predict_upright(frame, shifted);
    for (std::size_t p = 0; p < mean.points.size(); ++p)
      mean.points[p].x += one.points[p].x / samples, mean.points[p].y += one.points[p].y / samples;
  }
  return mean;
}

FaceLandmarks LandmarkModel::predict_upright(const GstVideoFrame& frame, const FaceBox& box) const {
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
  return impl_->shape(gray, box, {static_cast<double>(ox), static_cast<double>(oy)}, cv::Matx23d(1, 0, 0, 0, 1, 0));
}

FaceLandmarks LandmarkModel::predict_derotated(const GstVideoFrame& frame, const FaceBox& box, double tilt) const {
  // The square of twice the box's size around its centre (clipped to the frame) holds every pixel
  // the predictor samples after turning; it is rotated by -tilt about the box centre.
  const gint64 fw = GST_VIDEO_FRAME_WIDTH(&frame), fh = GST_VIDEO_FRAME_HEIGHT(&frame);
  const gint64 side = std::max(box.width, box.height);
  const gint64 cx = box.x + box.width / 2, cy = box.y + box.height / 2;
  const gint64 x0 = std::clamp<gint64>(cx - side, 0, fw - 1), y0 = std::clamp<gint64>(cy - side, 0, fh - 1);
  const gint64 x1 = std::clamp<gint64>(cx + side, x0 + 1, fw), y1 = std::clamp<gint64>(cy + side, y0 + 1, fh);
  const cv::Mat area = gray_area(frame, cv::Rect(static_cast<int>(x0), static_cast<int>(y0),
                                                 static_cast<int>(x1 - x0), static_cast<int>(y1 - y0)));
  const cv::Point2f centre(static_cast<float>(box.x - x0 + box.width / 2.0),
                           static_cast<float>(box.y - y0 + box.height / 2.0));
  const cv::Matx23d to_upright = cv::getRotationMatrix2D(centre, tilt * 180.0 / std::numbers::pi, 1.0);
  cv::Mat upright;
  cv::warpAffine(area, upright, cv::Mat(to_upright), area.size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT);
  cv::Matx23d back;
  cv::invertAffineTransform(to_upright, back);
  return impl_->shape(upright, box, {static_cast<double>(x0), static_cast<double>(y0)}, back);
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

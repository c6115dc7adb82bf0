#include "face_landmarks.hpp"

#include <dlib/image_processing.h>
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/opencv/cv_image.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <map>
#include <mutex>
#include <numbers>
#include <opencv2/imgproc.hpp>
#include <sys/stat.h>

namespace taconite::vision {

namespace {

// OpenCV's remap (under warpAffine) takes images below this size on both sides only.
constexpr int kMaxWarpSource = SHRT_MAX;

// Tilts (eye line against the horizontal) from which landmarks are refined on an upright copy.
constexpr double kRefineTiltRadians = 10.0 * std::numbers::pi / 180.0;

// The image's first plane as an image header over its memory (its stride; no copy): the luma for
// YUV and GRAY8, the packed pixels (3 or 4 bytes) for the RGB formats.
cv::Mat plane_view(const ImageView& image) {
  // cv::Mat has no read-only header; the pixels are only ever read through it.
  return cv::Mat(image.height, image.width, CV_8UC(plane0_bytes(image.format)),
                 const_cast<std::uint8_t*>(image.planes[0]), static_cast<std::size_t>(image.strides[0]));
}

// `pixels` (taken from plane_view) as full-range gray: packed RGB by BT.601 luma weights placed at
// the format's R, G and B byte offsets; limited-range (16-235) luma expanded to 0-255, since dlib's
// models were trained on full-range gray images.
cv::Mat to_gray(const ImageView& image, const cv::Mat& pixels) {
  if (pixels.channels() > 1) {
    cv::Mat weights = cv::Mat::zeros(1, pixels.channels(), CV_32F);
    const float luma[3] = {0.299f, 0.587f, 0.114f};  // R, G, B
    const std::array<int, 3> offsets = rgb_offsets(image.format);
    for (int c = 0; c < 3; ++c) weights.at<float>(0, offsets[static_cast<std::size_t>(c)]) = luma[c];
    cv::Mat gray;
    cv::transform(pixels, gray, weights);
    return gray;
  }
  if (is_yuv420(image.format) && !image.colour.full_range) {
    cv::Mat full;
    pixels.convertTo(full, CV_8U, 255.0 / 219.0, -16.0 * 255.0 / 219.0);  // saturates below 16 and above 235
    return full;
  }
  return pixels;
}

// The rectangle of the frame that holds every pixel `to_patch` maps into a patch of `size`
// (with a pixel more for interpolation), clipped to the frame; may be empty.
cv::Rect source_rect(const cv::Matx23d& to_patch, cv::Size size, int fw, int fh) {
  cv::Matx23d back;
  cv::invertAffineTransform(to_patch, back);
  double x0 = HUGE_VAL, y0 = HUGE_VAL, x1 = -HUGE_VAL, y1 = -HUGE_VAL;
  for (const cv::Point2d corner : {cv::Point2d(0, 0), cv::Point2d(size.width, 0), cv::Point2d(0, size.height),
                                   cv::Point2d(size.width, size.height)}) {
    const double x = back(0, 0) * corner.x + back(0, 1) * corner.y + back(0, 2);
    const double y = back(1, 0) * corner.x + back(1, 1) * corner.y + back(1, 2);
    x0 = std::min(x0, x), y0 = std::min(y0, y), x1 = std::max(x1, x), y1 = std::max(y1, y);
  }
  const int left = static_cast<int>(std::clamp(std::floor(x0) - 1, 0.0, static_cast<double>(fw)));
  const int top = static_cast<int>(std::clamp(std::floor(y0) - 1, 0.0, static_cast<double>(fh)));
  const int right = static_cast<int>(std::clamp(std::ceil(x1) + 2, 0.0, static_cast<double>(fw)));
  const int bottom = static_cast<int>(std::clamp(std::ceil(y1) + 2, 0.0, static_cast<double>(fh)));
  return {left, top, std::max(0, right - left), std::max(0, bottom - top)};
}

// What the predictor runs on for one face: a gray copy of the face's surroundings, turned upright
// and scaled so the box's longer side is at most kMaxPredictorBoxSide, the box in its pixels, and
// the map from its pixels back to frame pixels. Its work is bounded by that size, never by the
// box's or the frame's.
struct FacePatch {
  cv::Mat gray;
  dlib::rectangle box;
  cv::Matx23d to_frame;
};

// The patch of the face `box` covering `extent` (frame pixels) from the integer frame point
// `origin`, rotated by -`tilt` (radians) about the box centre; outside the frame it is black.
FacePatch face_patch(const ImageView& image, const FaceBox& box, double tilt, std::array<std::int64_t, 2> origin,
                     std::array<std::int64_t, 2> extent) {
  const double side = static_cast<double>(std::max(box.width, box.height));
  const double s = std::min(1.0, kMaxPredictorBoxSide / side);
  const double cx = box.x + box.width / 2.0, cy = box.y + box.height / 2.0;
  // Frame -> patch: turn by -tilt and scale about the centre, which lands at s * (centre - origin);
  // upright, that is p -> s * (p - origin), so an unscaled upright patch is an exact copy.
  cv::Matx23d to_patch = cv::getRotationMatrix2D(cv::Point2f(0, 0), tilt * 180.0 / std::numbers::pi, s);
  to_patch(0, 2) = s * (cx - origin[0]) - (to_patch(0, 0) * cx + to_patch(0, 1) * cy);
  to_patch(1, 2) = s * (cy - origin[1]) - (to_patch(1, 0) * cx + to_patch(1, 1) * cy);
  const cv::Size size(std::max(1, static_cast<int>(std::ceil(extent[0] * s))),
                      std::max(1, static_cast<int>(std::ceil(extent[1] * s))));
  FacePatch patch;
  cv::invertAffineTransform(to_patch, patch.to_frame);
  const cv::Mat whole = plane_view(image);
  const cv::Rect source = source_rect(to_patch, size, whole.cols, whole.rows);
  cv::Mat pixels(size, whole.type(), cv::Scalar::all(0));
  if (!source.empty()) {
    // Only the source rectangle is handed to OpenCV (its coordinates stay small); the map shifts.
    cv::Matx23d from_source = to_patch;
    from_source(0, 2) += to_patch(0, 0) * source.x + to_patch(0, 1) * source.y;
    from_source(1, 2) += to_patch(1, 0) * source.x + to_patch(1, 1) * source.y;
    cv::Mat from = whole(source);
    if (from.cols >= kMaxWarpSource || from.rows >= kMaxWarpSource) {
      // OpenCV's warp refuses sources this large: take every k-th pixel first, k no more than the
      // patch's own scale needs (the predictor reads single pixels anyway).
      const double k = std::max(std::ceil(std::max(from.cols, from.rows) / (kMaxWarpSource / 2.0)), std::floor(0.5 / s));
      cv::Mat every_kth;
      cv::resize(from, every_kth, cv::Size(std::max(1, static_cast<int>(std::lround(from.cols / k))),
                                           std::max(1, static_cast<int>(std::lround(from.rows / k)))),
                 0, 0, cv::INTER_NEAREST);
      const double sx = static_cast<double>(from.cols) / every_kth.cols;
      const double sy = static_cast<double>(from.rows) / every_kth.rows;
      for (int r = 0; r < 2; ++r) from_source(r, 0) *= sx, from_source(r, 1) *= sy;
      from = every_kth;
    }
    cv::warpAffine(from, pixels, cv::Mat(from_source), size, cv::INTER_LINEAR, cv::BORDER_CONSTANT);
  }
  patch.gray = to_gray(image, pixels);
  const double px = s * (cx - origin[0]), py = s * (cy - origin[1]);
  const double half_w = s * box.width / 2.0, half_h = s * box.height / 2.0;
  patch.box = dlib::rectangle(std::lround(px - half_w), std::lround(py - half_h), std::lround(px + half_w) - 1,
                              std::lround(py + half_h) - 1);
  return patch;
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

  // The 68 points of the face on its patch, in frame pixels.
  FaceLandmarks shape(const FacePatch& patch) const {
    const dlib::full_object_detection found = predictor(dlib::cv_image<unsigned char>(patch.gray), patch.box);
    const cv::Matx23d& back = patch.to_frame;
    FaceLandmarks out;
    for (unsigned long i = 0; i < out.points.size(); ++i) {
      const double u = found.part(i).x(), v = found.part(i).y();
      out.points[i] = {back(0, 0) * u + back(0, 1) * v + back(0, 2), back(1, 0) * u + back(1, 1) * v + back(1, 2)};
    }
    return out;
  }
};

LandmarkModel::LandmarkModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LandmarkModel::~LandmarkModel() = default;

Result<std::shared_ptr<const LandmarkModel>> LandmarkModel::load(const std::string& path) {
  if (path.empty()) return Error{ErrorKind::Input, "no landmark model file is set"};
  // Elements share a loaded model while one holds it (dlib's 68-point model takes ~100 MB and about
  // a second to load); keyed by the file's size and modification time too, so a replaced file reloads.
  static std::mutex cache_lock;
  static std::map<std::string, std::weak_ptr<const LandmarkModel>> cache;
  struct stat info {};
  const std::string key = ::stat(path.c_str(), &info) == 0 ? path + "|" + std::to_string(info.st_size) + "|" +
                                                                 std::to_string(info.st_mtime)
                                                           : std::string();
  std::lock_guard<std::mutex> guard(cache_lock);
  if (!key.empty())
    if (auto shared = cache[key].lock()) return shared;
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    return Error{ErrorKind::Io,
                 "the landmark model " + path + " does not exist (Debian: apt install libdlib-data)"};
  if (!std::filesystem::is_regular_file(path, error))
    return Error{ErrorKind::Io, "the landmark model " + path + " is not a regular file"};
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Error{ErrorKind::Io, "the landmark model " + path + " cannot be read: " + std::strerror(errno)};
  auto impl = std::make_unique<Impl>();
  try {
    dlib::deserialize(impl->predictor, file);
  } catch (const std::exception& e) {
    return Error{ErrorKind::Input, "the landmark model " + path + " is not a dlib shape predictor: " + e.what()};
  } catch (...) {
    return Error{ErrorKind::Input, "the landmark model " + path + " is not a dlib shape predictor"};
  }
  if (impl->predictor.num_parts() != 68)
    return Error{ErrorKind::Input, "the landmark model " + path + " predicts " +
                                       std::to_string(impl->predictor.num_parts()) +
                                       " points, expected dlib's 68-point markup"};
  std::shared_ptr<const LandmarkModel> model(new LandmarkModel(std::move(impl)));
  std::erase_if(cache, [](const auto& entry) { return entry.second.expired(); });
  if (!key.empty()) cache[key] = model;
  return model;
}

FaceLandmarks LandmarkModel::predict(const ImageView& image, const FaceBox& box, int samples) const {
  // The cascade starts from an upright mean face and drifts on faces tilted much beyond 15 degrees
  // (a 30-degree roll put points 10-25 % of the eye distance off). A tilted first answer is
  // therefore redone on a copy of the face's surroundings turned upright.
  const FaceLandmarks first = predict_upright(image, box);
  const auto five = first.five();
  const double tilt = std::atan2(five[1].y - five[0].y, five[1].x - five[0].x);
  const bool tilted = std::abs(tilt) >= kRefineTiltRadians;
  samples = std::clamp(samples, 1, kMaxBoxSamples);
  if (samples == 1) return tilted ? predict_derotated(image, box, tilt) : first;
  // Each answer depends on the box to a few % of the eye distance; averaging the answers on the
  // box and on copies shifted by 6 % of its size cancels much of that (measured in
  // tests/gst/alignment_quality_test.cpp).
  const std::int64_t dx = std::max<std::int64_t>(1, box.width * 6 / 100);
  const std::int64_t dy = std::max<std::int64_t>(1, box.height * 6 / 100);
  const std::array<std::array<std::int64_t, 2>, kMaxBoxSamples> shifts{{{0, 0}, {dx, 0}, {-dx, 0}, {0, dy}, {0, -dy}}};
  FaceLandmarks mean;
  mean.points.fill({});
  for (int i = 0; i < samples; ++i) {
    const FaceBox shifted{box.x + shifts[i][0], box.y + shifts[i][1], box.width, box.height};
    const FaceLandmarks one = i == 0 && !tilted ? first
                              : tilted          ? predict_derotated(image, shifted, tilt)
                                                : predict_upright(image, shifted);
    for (std::size_t p = 0; p < mean.points.size(); ++p)
      mean.points[p].x += one.points[p].x / samples, mean.points[p].y += one.points[p].y / samples;
  }
  return mean;
}

FaceLandmarks LandmarkModel::predict_upright(const ImageView& image, const FaceBox& box) const {
  // The predictor samples pixels around the box's mean shape; a quarter of the box on each side
  // covers them (dlib reads pixels outside its image as 0).
  const std::int64_t mx = box.width / 4, my = box.height / 4;
  return impl_->shape(face_patch(image, box, 0.0, {box.x - mx, box.y - my}, {box.width + 2 * mx, box.height + 2 * my}));
}

FaceLandmarks LandmarkModel::predict_derotated(const ImageView& image, const FaceBox& box, double tilt) const {
  // The square of twice the box's size around its centre holds every pixel the predictor samples
  // after turning; it is rotated by -tilt about the box centre.
  const std::int64_t side = std::max(box.width, box.height);
  const std::int64_t cx = box.x + box.width / 2, cy = box.y + box.height / 2;
  return impl_->shape(face_patch(image, box, tilt, {cx - side, cy - side}, {2 * side, 2 * side}));
}

struct FaceDetector::Impl {
  dlib::frontal_face_detector detector = dlib::get_frontal_face_detector();
};

FaceDetector::FaceDetector() : impl_(std::make_unique<Impl>()) {}
FaceDetector::~FaceDetector() = default;

std::vector<FaceDetection> FaceDetector::detect(const ImageView& image, double scale) {
  const cv::Mat whole = plane_view(image);
  // Large frames are scaled down to kMaxDetectPixels: HOG's work grows with the pixels.
  const double area = static_cast<double>(whole.cols) * whole.rows;
  scale = std::min(scale, std::sqrt(static_cast<double>(kMaxDetectPixels) / area));
  cv::Mat pixels = whole;
  if (scale < 1.0)
    cv::resize(whole, pixels, cv::Size(std::max(1, static_cast<int>(std::lround(whole.cols * scale))),
                                       std::max(1, static_cast<int>(std::lround(whole.rows * scale)))),
               0, 0, cv::INTER_AREA);
  const cv::Mat gray = to_gray(image, pixels);
  const double to_frame_x = static_cast<double>(whole.cols) / gray.cols;
  const double to_frame_y = static_cast<double>(whole.rows) / gray.rows;
  std::vector<dlib::rect_detection> found;
  impl_->detector(dlib::cv_image<unsigned char>(gray), found);
  std::vector<FaceDetection> out;
  for (const dlib::rect_detection& d : found) {
    const std::int64_t x = std::llround(d.rect.left() * to_frame_x), y = std::llround(d.rect.top() * to_frame_y);
    out.push_back({{x, y, std::llround((d.rect.right() + 1) * to_frame_x) - x,
                    std::llround((d.rect.bottom() + 1) * to_frame_y) - y},
                   d.detection_confidence});
  }
  return out;
}

}  // namespace taconite::vision

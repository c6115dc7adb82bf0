#include "face_quality.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <opencv2/imgproc.hpp>

namespace taconite::vision {

namespace {

constexpr double kDegrees = 180.0 / 3.14159265358979323846;

// insightface's 112x112 template (bundle.md §10): the reference for size and pose.
const std::array<cv::Point2d, 5> kTemplate = {{
    {38.2946, 51.6963},
    {73.5318, 51.5014},
    {56.0252, 71.7366},
    {41.5493, 92.3655},
    {70.7299, 92.2041},
}};
constexpr int kTemplateSide = 112;

// A human head seen from the front: the nose tip stands about 0.7 half eye distances in front of
// the eyes, and 0.35 eye-to-mouth heights: a turn by angle a moves it by that depth times tan(a).
constexpr double kNoseDepthPerHalfEyes = 0.7;
constexpr double kNoseDepthPerEyeMouth = 0.35;

// Yaw and pitch cost quadratically up to these angles (a profile or a face seen from above is
// useless for recognition); roll is free up to kFreeRoll (the alignment undoes it), then fades.
constexpr double kYawLimit = 60.0, kPitchLimit = 45.0, kFreeRoll = 30.0, kRollFade = 60.0;
constexpr double kSharpnessHalf = 100.0;  // Laplacian variance (8-bit luma) scoring 0.5
constexpr double kSizeWeight = 0.3, kPoseWeight = 0.4, kSharpnessWeight = 0.3;
constexpr double kPartFloor = 0.01;  // a part at 0 still lets the others order faces
constexpr double kNormDecay = 0.05;  // weight of a new norm in the running statistics
constexpr double kNormSpread = 3.0;  // deviations mapped to the full factor range (AdaFace's h = 0.33)
constexpr unsigned kNormWarmup = 10;  // norms seen before the statistics are trusted

bool finite(const cv::Point2d& p) { return std::isfinite(p.x) && std::isfinite(p.y); }
cv::Point2d middle(const cv::Point2d& a, const cv::Point2d& b) { return (a + b) * 0.5; }

// A point in the eye line's frame: origin between the eyes, x along the eye line, y down, in eye
// distances.
struct EyeFrame {
  cv::Point2d origin, along, down;
  double eyes = 0.0;
  explicit EyeFrame(std::span<const cv::Point2d> p) : origin(middle(p[0], p[1])) {
    const cv::Point2d d = p[1] - p[0];
    eyes = std::hypot(d.x, d.y);
    along = eyes > 0.0 ? d / eyes : cv::Point2d(1.0, 0.0);
    down = {-along.y, along.x};
  }
  cv::Point2d local(const cv::Point2d& q) const {
    const cv::Point2d r = q - origin;
    return {r.dot(along) / eyes, r.dot(down) / eyes};
  }
};

double fade(double value) { return std::clamp(value, 0.0, 1.0); }

}  // namespace

std::optional<FacePose> estimate_pose(std::span<const cv::Point2d> five) {
  if (five.size() != 5 || !std::all_of(five.begin(), five.end(), finite)) return std::nullopt;
  const EyeFrame frame(five);
  if (!(frame.eyes > 1e-6)) return std::nullopt;
  const EyeFrame reference(kTemplate);
  const cv::Point2d nose = frame.local(five[2]), nose0 = reference.local(kTemplate[2]);
  const double mouth = frame.local(middle(five[3], five[4])).y;
  const double mouth0 = reference.local(middle(kTemplate[3], kTemplate[4])).y;
  if (!(mouth > 1e-6)) return std::nullopt;  // mouth above the eyes: not a face
  FacePose pose;
  pose.roll = std::atan2(frame.along.y, frame.along.x) * kDegrees;
  pose.yaw = std::atan((nose.x - nose0.x) / 0.5 / kNoseDepthPerHalfEyes) * kDegrees;
  pose.pitch = std::atan((nose.y / mouth - nose0.y / mouth0) / kNoseDepthPerEyeMouth) * kDegrees;
  return pose;
}

double size_score(double box_width, std::span<const cv::Point2d> landmarks) {
  if (landmarks.size() >= 2 && std::all_of(landmarks.begin(), landmarks.end(), finite)) {
    const EyeFrame frame(landmarks), reference(kTemplate);
    double scale = frame.eyes / reference.eyes;
    if (landmarks.size() == 5) {  // the eye-to-mouth height does not shrink when the head turns
      const double height = cv::norm(middle(landmarks[3], landmarks[4]) - frame.origin);
      const double height0 = cv::norm(middle(kTemplate[3], kTemplate[4]) - reference.origin);
      scale = std::max(scale, height / height0);
    }
    return fade(scale);
  }
  return std::isfinite(box_width) ? fade(box_width / kTemplateSide) : 0.0;
}

double pose_score(const FacePose& pose) {
  const double yaw = pose.yaw / kYawLimit, pitch = pose.pitch / kPitchLimit;
  const double roll = fade(1.0 - (std::abs(pose.roll) - kFreeRoll) / kRollFade);
  return fade(1.0 - yaw * yaw) * fade(1.0 - pitch * pitch) * roll;
}

double sharpness_score(double laplacian_variance) {
  if (!(laplacian_variance > 0.0)) return 0.0;
  if (!std::isfinite(laplacian_variance)) return 1.0;
  return laplacian_variance / (laplacian_variance + kSharpnessHalf);
}

double laplacian_variance(std::span<const float> chw, int width, int height, const PixelNormalisation& norm) {
  if (width < 3 || height < 3) return 0.0;
  const std::size_t plane = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  if (chw.size() != 3 * plane) return 0.0;
  cv::Mat luma(height, width, CV_32F);
  auto* out = luma.ptr<float>();
  for (std::size_t i = 0; i < plane; ++i) {  // back to 0..255: the threshold is in 8-bit units
    float sum = 0.0f;
    for (std::size_t c = 0; c < 3; ++c) sum += chw[c * plane + i] * norm.std_dev[c] + norm.mean[c];
    out[i] = sum / 3.0f * 255.0f;
  }
  cv::Mat laplacian;
  cv::Laplacian(luma, laplacian, CV_32F);
  cv::Scalar mean, deviation;
  cv::meanStdDev(laplacian, mean, deviation);
  const double variance = deviation[0] * deviation[0];
  return std::isfinite(variance) ? variance : 0.0;
}

FaceQuality assess_face(double box_width, std::span<const cv::Point2d> landmarks, std::span<const float> chw,
                        int width, int height, const PixelNormalisation& norm) {
  FaceQuality q;
  q.size = size_score(box_width, landmarks);
  q.angles = estimate_pose(landmarks);
  q.pose = q.angles ? pose_score(*q.angles) : 1.0;  // no landmarks: the pose is not judged
  q.sharpness = sharpness_score(laplacian_variance(chw, width, height, norm));
  const auto part = [](double v, double weight) { return std::pow(std::max(v, kPartFloor), weight); };
  q.score = part(q.size, kSizeWeight) * part(q.pose, kPoseWeight) * part(q.sharpness, kSharpnessWeight);
  return q;
}

void NormStatistics::add(double norm) {
  if (!std::isfinite(norm)) return;
  if (count_ == 0) {
    mean_ = norm;
  } else {
    const double delta = norm - mean_;
    mean_ += kNormDecay * delta;
    variance_ = (1.0 - kNormDecay) * (variance_ + kNormDecay * delta * delta);
  }
  if (count_ < kNormWarmup) ++count_;
}

double NormStatistics::factor(double norm) const {
  if (count_ < kNormWarmup || !(variance_ > 0.0) || !std::isfinite(norm)) return 0.75;
  const double z = (norm - mean_) / (kNormSpread * std::sqrt(variance_));
  return 0.75 + 0.25 * std::clamp(z, -1.0, 1.0);
}

}  // namespace taconite::vision

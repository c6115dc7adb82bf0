#include "similarity_alignment.hpp"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "face_preprocess.hpp"
#include "rgb_conversion.hpp"

namespace taconite::vision {

namespace {

// insightface's arcface template for 112x112 (bundle.md §10).
constexpr std::array<Point2, 5> kTemplate112 = {{
    {38.2946, 51.6963},
    {73.5318, 51.5014},
    {56.0252, 71.7366},
    {41.5493, 92.3655},
    {70.7299, 92.2041},
}};

}  // namespace

std::array<Point2, 5> alignment_template(int width, int height) {
  std::array<Point2, 5> out = kTemplate112;
  for (Point2& p : out) {
    p.x *= width / 112.0;
    p.y *= height / 112.0;
  }
  return out;
}

std::optional<cv::Matx23d> fit_similarity(std::span<const Point2> src, std::span<const Point2> dst) {
  const std::size_t n = std::min(src.size(), dst.size());
  if (n < 2) return std::nullopt;
  Point2 ms, md;
  for (std::size_t i = 0; i < n; ++i) {
    ms.x += src[i].x / n;
    ms.y += src[i].y / n;
    md.x += dst[i].x / n;
    md.y += dst[i].y / n;
  }
  // With complex numbers p = src - mean, q = dst - mean: minimising sum |q - z p|^2 over z gives
  // z = sum(conj(p) q) / sum |p|^2, i.e. Umeyama's rotation times scale (no reflection possible).
  double sxx = 0.0, a_num = 0.0, b_num = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double px = src[i].x - ms.x, py = src[i].y - ms.y;
    const double qx = dst[i].x - md.x, qy = dst[i].y - md.y;
    sxx += px * px + py * py;
    a_num += px * qx + py * qy;
    b_num += px * qy - py * qx;
  }
  if (sxx <= 1e-12) return std::nullopt;
  const double a = a_num / sxx, b = b_num / sxx;
  const double tx = md.x - (a * ms.x - b * ms.y);
  const double ty = md.y - (b * ms.x + a * ms.y);
  return cv::Matx23d(a, -b, tx, b, a, ty);
}

std::optional<cv::Matx23d> alignment_transform(std::span<const Point2> landmarks, int width, int height) {
  const std::array<Point2, 5> target = alignment_template(width, height);
  if (landmarks.size() == 5) return fit_similarity(landmarks, target);
  if (landmarks.size() == 2) return fit_similarity(landmarks, std::span<const Point2>(target.data(), 2));
  return std::nullopt;
}

namespace {

// A bilinear warp that shrinks samples only 4 pixels per output pixel and aliases: a face 1.5x the
// template's size came out of it looking like another face. When `to_output` shrinks, the source
// is first reduced by the same factor with area averaging, and `to_output` rewritten to read the
// reduced image (pixel centres kept), so the warp itself works at about scale 1.
cv::Mat shrink_for_warp(const cv::Mat& source, cv::Matx23d& to_output) {
  const double scale = std::hypot(to_output(0, 0), to_output(1, 0));
  if (scale >= 1.0) return source;
  const cv::Size reduced(std::max(1, static_cast<int>(std::lround(source.cols * scale))),
                         std::max(1, static_cast<int>(std::lround(source.rows * scale))));
  cv::Mat small;
  cv::resize(source, small, reduced, 0, 0, cv::INTER_AREA);
  // A reduced pixel (u, v) has its centre at source ((u + 0.5) / fx - 0.5, (v + 0.5) / fy - 0.5).
  const double fx = static_cast<double>(reduced.width) / source.cols;
  const double fy = static_cast<double>(reduced.height) / source.rows;
  for (int r = 0; r < 2; ++r) {
    to_output(r, 2) += to_output(r, 0) * (0.5 / fx - 0.5) + to_output(r, 1) * (0.5 / fy - 0.5);
    to_output(r, 0) /= fx;
    to_output(r, 1) /= fy;
  }
  return small;
}

}  // namespace

Result<cv::Matx23d> checked_alignment(std::span<const Point2> landmarks, int frame_width, int frame_height, int width,
                                      int height) {
  const auto rejected = [](std::string why) { return Error{ErrorKind::Input, std::move(why)}; };
  if (landmarks.size() < 2) return rejected("fewer than 2 landmarks");
  const double fw = frame_width, fh = frame_height;
  for (std::size_t i = 0; i < landmarks.size(); ++i) {
    const Point2& p = landmarks[i];
    if (!std::isfinite(p.x) || !std::isfinite(p.y))
      return rejected("landmark " + std::to_string(i) + " is not a finite number");
    if (p.x < -fw || p.x > 2 * fw || p.y < -fh || p.y > 2 * fh)
      return rejected("landmark " + std::to_string(i) + " (" + std::to_string(p.x) + ", " + std::to_string(p.y) +
                      ") lies more than a frame size outside the frame");
  }
  const double eyes = std::hypot(landmarks[1].x - landmarks[0].x, landmarks[1].y - landmarks[0].y);
  if (eyes < 2.0) return rejected("the eyes are " + std::to_string(eyes) + " pixels apart");
  const std::optional<cv::Matx23d> fit = alignment_transform(landmarks, width, height);
  if (!fit) return rejected("the landmarks determine no similarity");
  // The fit maps frame pixels to model pixels: the model input spans width / scale frame pixels.
  const double span = width / std::hypot((*fit)(0, 0), (*fit)(1, 0));
  if (!(span >= 4.0 && span <= 4.0 * std::max(fw, fh)))
    return rejected("the fitted face would span " + std::to_string(span) + " pixels of the frame");
  return *fit;
}

cv::Mat aligned_face_rgb(const ImageView& image, const cv::Matx23d& to_template, int width, int height) {
  // Convert only the image region the output square comes from (plus a pixel for bilinear).
  cv::Matx23d inverse;
  cv::invertAffineTransform(to_template, inverse);
  double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
  for (const auto& [u, v] : {std::pair{0.0, 0.0}, {double(width), 0.0}, {0.0, double(height)}, {double(width), double(height)}}) {
    const double x = inverse(0, 0) * u + inverse(0, 1) * v + inverse(0, 2);
    const double y = inverse(1, 0) * u + inverse(1, 1) * v + inverse(1, 2);
    x0 = std::min(x0, x), y0 = std::min(y0, y), x1 = std::max(x1, x), y1 = std::max(y1, y);
  }
  const int fw = image.width, fh = image.height;
  // Clamp to the image (plus a black border pixel): landmarks far off-frame must not allocate huge images.
  const int left = std::clamp(static_cast<int>(std::floor(x0)) - 2, -1, fw);
  const int top = std::clamp(static_cast<int>(std::floor(y0)) - 2, -1, fh);
  const int right = std::clamp(static_cast<int>(std::ceil(x1)) + 2, left + 1, fw + 1);
  const int bottom = std::clamp(static_cast<int>(std::ceil(y1)) + 2, top + 1, fh + 1);
  const cv::Rect region(left, top, right - left, bottom - top);
  const cv::Mat source = extract_rgb(image, region);  // black outside the image

  // Image coordinates = region coordinates + region origin.
  cv::Matx23d local = to_template;
  local(0, 2) += to_template(0, 0) * region.x + to_template(0, 1) * region.y;
  local(1, 2) += to_template(1, 0) * region.x + to_template(1, 1) * region.y;
  const cv::Mat warp_source = shrink_for_warp(source, local);
  cv::Mat aligned;
  cv::warpAffine(warp_source, aligned, cv::Mat(local), cv::Size(width, height), cv::INTER_LINEAR, cv::BORDER_CONSTANT,
                 cv::Scalar::all(0));
  return aligned;
}

void aligned_face_to_chw(const ImageView& image, const cv::Matx23d& to_template, int width, int height,
                         const PixelNormalisation& norm, std::vector<float>& chw) {
  to_normalised_chw(aligned_face_rgb(image, to_template, width, height), width, height, norm, chw);
}

}  // namespace taconite::vision

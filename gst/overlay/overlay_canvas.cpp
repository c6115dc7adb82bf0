#include "overlay_canvas.hpp"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

namespace taconite::gst {

namespace {

std::uint8_t to_byte(double v) { return static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L)); }

// Y', Cb, Cr bytes of an R'G'B' colour for the matrix (kr, kb) and range.
cv::Vec3b ycbcr(Rgb c, const vision::YuvColour& colour) {
  const double r = c.r / 255.0, g = c.g / 255.0, b = c.b / 255.0;
  const double y = colour.kr * r + (1.0 - colour.kr - colour.kb) * g + colour.kb * b;
  const double cb = (b - y) / (2.0 * (1.0 - colour.kb)), cr = (r - y) / (2.0 * (1.0 - colour.kr));
  if (colour.full_range) return {to_byte(255.0 * y), to_byte(128.0 + 255.0 * cb), to_byte(128.0 + 255.0 * cr)};
  return {to_byte(16.0 + 219.0 * y), to_byte(128.0 + 224.0 * cb), to_byte(128.0 + 224.0 * cr)};
}

// A coordinate range clipped to [0, limit).
std::pair<std::int64_t, std::int64_t> clip(std::int64_t start, std::int64_t length, std::int64_t limit) {
  const std::int64_t end = start + std::max<std::int64_t>(length, 0);
  return {std::clamp<std::int64_t>(start, 0, limit), std::clamp<std::int64_t>(end, 0, limit)};
}

}  // namespace

OverlayCanvas::OverlayCanvas(const vision::ImageView& view, const std::vector<std::uint8_t*>& planes,
                             const std::vector<cv::Size>& plane_sizes)
    : view_(view), width_(view.width), height_(view.height) {
  auto add = [&](std::size_t i, int type, int divisor, Channels channels) {
    planes_.push_back({cv::Mat(plane_sizes.at(i), type, planes.at(i), static_cast<std::size_t>(view.strides.at(i))),
                       divisor, channels});
  };
  switch (view.format) {
    case vision::PixelFormat::I420:
      add(0, CV_8UC1, 1, Channels::Luma);
      add(1, CV_8UC1, 2, Channels::Cb);
      add(2, CV_8UC1, 2, Channels::Cr);
      break;
    case vision::PixelFormat::Nv12:
      add(0, CV_8UC1, 1, Channels::Luma);
      add(1, CV_8UC2, 2, Channels::CbCr);
      break;
    default: add(0, vision::plane0_bytes(view.format) == 3 ? CV_8UC3 : CV_8UC4, 1, Channels::Packed); break;
  }
}

cv::Scalar OverlayCanvas::value(const Plane& plane, Rgb colour) const {
  const cv::Vec3b yuv = ycbcr(colour, view_.colour);
  switch (plane.channels) {
    case Channels::Luma: return cv::Scalar(yuv[0]);
    case Channels::Cb: return cv::Scalar(yuv[1]);
    case Channels::Cr: return cv::Scalar(yuv[2]);
    case Channels::CbCr: return cv::Scalar(yuv[1], yuv[2]);
    case Channels::Packed: break;
  }
  cv::Scalar packed(255, 255, 255, 255);  // the padding or alpha byte: opaque
  const std::array<int, 3> at = vision::rgb_offsets(view_.format);
  packed[at[0]] = colour.r;
  packed[at[1]] = colour.g;
  packed[at[2]] = colour.b;
  return packed;
}

void OverlayCanvas::fill(const PixelRect& rect, Rgb colour) {
  const auto [x0, x1] = clip(rect.x, rect.width, width_);
  const auto [y0, y1] = clip(rect.y, rect.height, height_);
  if (x0 >= x1 || y0 >= y1) return;
  for (Plane& plane : planes_) {
    const std::int64_t d = plane.divisor;
    // Every sample the rectangle touches, within the plane (its size rounds the frame's up).
    const int px0 = static_cast<int>(x0 / d), py0 = static_cast<int>(y0 / d);
    const int px1 = std::min(static_cast<int>((x1 + d - 1) / d), plane.pixels.cols);
    const int py1 = std::min(static_cast<int>((y1 + d - 1) / d), plane.pixels.rows);
    if (px0 < px1 && py0 < py1) plane.pixels(cv::Rect(px0, py0, px1 - px0, py1 - py0)).setTo(value(plane, colour));
  }
}

void OverlayCanvas::dot(double x, double y, int radius, Rgb colour) {
  if (!std::isfinite(x) || !std::isfinite(y) || x < 0 || y < 0 || x >= width_ || y >= height_) return;
  for (Plane& plane : planes_) {
    const int d = plane.divisor;
    cv::circle(plane.pixels, cv::Point(static_cast<int>(x) / d, static_cast<int>(y) / d), std::max(1, radius / d),
               value(plane, colour), cv::FILLED, cv::LINE_8);
  }
}

void OverlayCanvas::text(const std::string& text, int x, int y, double scale, int thickness, Rgb colour) {
  for (Plane& plane : planes_) {
    const int d = plane.divisor;
    cv::putText(plane.pixels, text, cv::Point(x / d, y / d), cv::FONT_HERSHEY_SIMPLEX, scale / d,
                value(plane, colour), std::max(1, thickness / d), cv::LINE_8);
  }
}

}  // namespace taconite::gst

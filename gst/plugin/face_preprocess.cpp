#include "face_preprocess.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <opencv2/imgproc.hpp>

namespace taconite::gst {

namespace {

cv::Mat plane_view(const GstVideoFrame& frame, int plane, int type, const cv::Rect& rect, int bytes_per_pixel) {
  auto* base = static_cast<std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, plane));
  const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, plane);
  return cv::Mat(rect.height, rect.width, type, base + static_cast<std::ptrdiff_t>(rect.y) * stride +
                                                    static_cast<std::ptrdiff_t>(rect.x) * bytes_per_pixel,
                 static_cast<std::size_t>(stride));
}

// Packed RGB-family formats: convert just the rectangle.
cv::Mat packed_to_rgb(const GstVideoFrame& frame, const cv::Rect& rect) {
  cv::Mat rgb;
  switch (GST_VIDEO_FRAME_FORMAT(&frame)) {
    case GST_VIDEO_FORMAT_RGB: plane_view(frame, 0, CV_8UC3, rect, 3).copyTo(rgb); break;
    case GST_VIDEO_FORMAT_BGR: cv::cvtColor(plane_view(frame, 0, CV_8UC3, rect, 3), rgb, cv::COLOR_BGR2RGB); break;
    case GST_VIDEO_FORMAT_RGBx:
    case GST_VIDEO_FORMAT_RGBA: cv::cvtColor(plane_view(frame, 0, CV_8UC4, rect, 4), rgb, cv::COLOR_RGBA2RGB); break;
    case GST_VIDEO_FORMAT_BGRx:
    case GST_VIDEO_FORMAT_BGRA: cv::cvtColor(plane_view(frame, 0, CV_8UC4, rect, 4), rgb, cv::COLOR_BGRA2RGB); break;
    case GST_VIDEO_FORMAT_xRGB:
    case GST_VIDEO_FORMAT_xBGR: {
      // No cvtColor code for a leading padding byte: pick the three colour bytes directly.
      const bool xrgb = GST_VIDEO_FRAME_FORMAT(&frame) == GST_VIDEO_FORMAT_xRGB;
      const int from_to[] = {xrgb ? 1 : 3, 0, 2, 1, xrgb ? 3 : 1, 2};
      rgb.create(rect.height, rect.width, CV_8UC3);
      cv::Mat src = plane_view(frame, 0, CV_8UC4, rect, 4);
      cv::mixChannels(&src, 1, &rgb, 1, from_to, 3);
      break;
    }
    default: break;
  }
  return rgb;
}

// Copies `count` bytes of a row starting at `x`, repeating the row's last byte past `limit`
// (odd-sized 4:2:0 frames: OpenCV's converters want even sizes).
void copy_clamped(const std::uint8_t* row, int x, int count, int limit, int step, std::uint8_t* out) {
  for (int i = 0; i < count; ++i) {
    const int sx = std::min(x + i, limit - 1);
    std::memcpy(out + static_cast<std::ptrdiff_t>(i) * step, row + static_cast<std::ptrdiff_t>(sx) * step,
                static_cast<std::size_t>(step));
  }
}

// 4:2:0 formats: gather an even-aligned rectangle into OpenCV's contiguous layout, convert
// (BT.601 limited range, OpenCV's YUV420 converters), then cut out the requested rectangle.
cv::Mat yuv420_to_rgb(const GstVideoFrame& frame, const cv::Rect& rect) {
  const int width = GST_VIDEO_FRAME_WIDTH(&frame), height = GST_VIDEO_FRAME_HEIGHT(&frame);
  const int x0 = rect.x & ~1, y0 = rect.y & ~1;
  const int x1 = (rect.x + rect.width + 1) & ~1, y1 = (rect.y + rect.height + 1) & ~1;
  const int w = x1 - x0, h = y1 - y0;  // even
  const int cw = (width + 1) / 2, ch = (height + 1) / 2;
  const bool nv12 = GST_VIDEO_FRAME_FORMAT(&frame) == GST_VIDEO_FORMAT_NV12;

  cv::Mat yuv(h * 3 / 2, w, CV_8UC1);
  std::uint8_t* out = yuv.data;
  auto plane_row = [&](int plane, int row) {
    return static_cast<const std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, plane)) +
           static_cast<std::ptrdiff_t>(row) * GST_VIDEO_FRAME_PLANE_STRIDE(&frame, plane);
  };
  for (int y = 0; y < h; ++y) copy_clamped(plane_row(0, std::min(y0 + y, height - 1)), x0, w, width, 1, out + y * w);
  out += static_cast<std::ptrdiff_t>(w) * h;
  if (nv12) {
    for (int y = 0; y < h / 2; ++y) copy_clamped(plane_row(1, std::min(y0 / 2 + y, ch - 1)), x0 / 2, w / 2, cw, 2, out + y * w);
  } else {
    for (int plane = 1; plane <= 2; ++plane) {
      for (int y = 0; y < h / 2; ++y)
        copy_clamped(plane_row(plane, std::min(y0 / 2 + y, ch - 1)), x0 / 2, w / 2, cw, 1, out + y * (w / 2));
      out += static_cast<std::ptrdiff_t>(w / 2) * (h / 2);
    }
  }
  cv::Mat rgb;
  cv::cvtColor(yuv, rgb, nv12 ? cv::COLOR_YUV2RGB_NV12 : cv::COLOR_YUV2RGB_I420);
  return rgb(cv::Rect(rect.x - x0, rect.y - y0, rect.width, rect.height)).clone();
}

}  // namespace

cv::Mat extract_rgb(const GstVideoFrame& frame, const cv::Rect& region) {
  const cv::Rect inside = region & cv::Rect(0, 0, GST_VIDEO_FRAME_WIDTH(&frame), GST_VIDEO_FRAME_HEIGHT(&frame));
  cv::Mat pixels;
  if (!inside.empty()) {
    const GstVideoFormat format = GST_VIDEO_FRAME_FORMAT(&frame);
    pixels = (format == GST_VIDEO_FORMAT_I420 || format == GST_VIDEO_FORMAT_NV12) ? yuv420_to_rgb(frame, inside)
                                                                                 : packed_to_rgb(frame, inside);
  }
  if (inside == region && !pixels.empty()) return pixels;
  cv::Mat padded(region.height, region.width, CV_8UC3, cv::Scalar::all(0));
  if (!pixels.empty()) pixels.copyTo(padded(cv::Rect(inside.x - region.x, inside.y - region.y, inside.width, inside.height)));
  return padded;
}

cv::Rect square_with_margin(const PixelBox& box, double margin) {
  const double side = std::max(box.width, box.height) * (1.0 + 2.0 * margin);
  const double cx = box.x + box.width / 2.0, cy = box.y + box.height / 2.0;
  const int s = std::max(1, static_cast<int>(std::lround(side)));
  return {static_cast<int>(std::lround(cx - s / 2.0)), static_cast<int>(std::lround(cy - s / 2.0)), s, s};
}

void to_normalised_chw(const cv::Mat& rgb, int width, int height, ChannelOrder order, std::vector<float>& chw) {
  cv::Mat sized = rgb;
  if (rgb.cols != width || rgb.rows != height) {
    const bool shrinking = rgb.cols >= width && rgb.rows >= height;
    cv::resize(rgb, sized, cv::Size(width, height), 0, 0, shrinking ? cv::INTER_AREA : cv::INTER_LINEAR);
  }
  const std::size_t plane = static_cast<std::size_t>(width) * height;
  chw.resize(3 * plane);
  // Output plane c takes source channel source[c]: RGB keeps R,G,B; BGR feeds B,G,R.
  const int source[3] = {order == ChannelOrder::Rgb ? 0 : 2, 1, order == ChannelOrder::Rgb ? 2 : 0};
  for (int y = 0; y < height; ++y) {
    const auto* row = sized.ptr<cv::Vec3b>(y);
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c)
        chw[c * plane + static_cast<std::size_t>(y) * width + x] = (row[x][source[c]] / 255.0f - 0.5f) / 0.5f;
  }
}

void face_to_chw(const GstVideoFrame& frame, const FaceJob& face, double margin, int width, int height,
                 ChannelOrder order, std::vector<float>& chw) {
  const cv::Rect region = face.whole_buffer ? cv::Rect(0, 0, GST_VIDEO_FRAME_WIDTH(&frame), GST_VIDEO_FRAME_HEIGHT(&frame))
                                            : square_with_margin(face.box, margin);
  to_normalised_chw(extract_rgb(frame, region), width, height, order, chw);
}

}  // namespace taconite::gst

#include "face_preprocess.hpp"

#include <algorithm>
#include <cmath>
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

// Y'CbCr -> R'G'B' as the caps' colorimetry says, as a 3x4 matrix on (Y, U, V, 1): the matrix's
// Kr/Kb (GStreamer's table; BT.601 when the caps leave it unknown) and limited (16-235/240) or
// full range. OpenCV's own 4:2:0 converters know only BT.601 limited range.
cv::Matx34f yuv_to_rgb_matrix(const GstVideoColorimetry& colorimetry) {
  gdouble kr = 0.299, kb = 0.114;
  if (!gst_video_color_matrix_get_Kr_Kb(colorimetry.matrix, &kr, &kb)) kr = 0.299, kb = 0.114;
  const bool full = colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255;
  const double y_scale = full ? 1.0 : 255.0 / 219.0, y_offset = full ? 0.0 : 16.0, c_scale = full ? 1.0 : 255.0 / 224.0;
  const double kg = 1.0 - kr - kb;
  const double r_v = 2.0 * (1.0 - kr) * c_scale, b_u = 2.0 * (1.0 - kb) * c_scale;
  const double g_u = -2.0 * kb * (1.0 - kb) / kg * c_scale, g_v = -2.0 * kr * (1.0 - kr) / kg * c_scale;
  const double y0 = -y_scale * y_offset;
  const auto f = [](double v) { return static_cast<float>(v); };
  return {f(y_scale), 0.0f,   f(r_v), f(y0 - 128.0 * r_v),
          f(y_scale), f(g_u), f(g_v), f(y0 - 128.0 * (g_u + g_v)),
          f(y_scale), f(b_u), 0.0f,   f(y0 - 128.0 * b_u)};
}

// 4:2:0 formats (I420, NV12): each pixel takes the chroma of its 2x2 block (the chroma covering
// the rectangle, doubled with INTER_NEAREST), converted by the caps' colorimetry.
cv::Mat yuv420_to_rgb(const GstVideoFrame& frame, const cv::Rect& rect) {
  const int cx0 = rect.x / 2, cy0 = rect.y / 2;
  const cv::Rect chroma(cx0, cy0, (rect.x + rect.width + 1) / 2 - cx0, (rect.y + rect.height + 1) / 2 - cy0);
  const cv::Rect in_doubled(rect.x - 2 * cx0, rect.y - 2 * cy0, rect.width, rect.height);
  auto doubled = [&](const cv::Mat& plane) {
    cv::Mat up;
    cv::resize(plane, up, cv::Size(), 2.0, 2.0, cv::INTER_NEAREST);
    return up(in_doubled);
  };
  std::vector<cv::Mat> planes{plane_view(frame, 0, CV_8UC1, rect, 1)};
  if (GST_VIDEO_FRAME_FORMAT(&frame) == GST_VIDEO_FORMAT_NV12) {
    planes.push_back(doubled(plane_view(frame, 1, CV_8UC2, chroma, 2)));  // interleaved U, V
  } else {
    planes.push_back(doubled(plane_view(frame, 1, CV_8UC1, chroma, 1)));
    planes.push_back(doubled(plane_view(frame, 2, CV_8UC1, chroma, 1)));
  }
  cv::Mat yuv, rgb;
  cv::merge(planes, yuv);
  cv::transform(yuv, rgb, yuv_to_rgb_matrix(GST_VIDEO_INFO_COLORIMETRY(&frame.info)));
  return rgb;
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

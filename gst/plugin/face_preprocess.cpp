#include "face_preprocess.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
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

// Packed RGB-family pixels (3 or 4 bytes each, as `format` lays them out) to RGB.
cv::Mat packed_pixels_to_rgb(const cv::Mat& packed, GstVideoFormat format) {
  cv::Mat rgb;
  switch (format) {
    case GST_VIDEO_FORMAT_RGB: packed.copyTo(rgb); break;
    case GST_VIDEO_FORMAT_BGR: cv::cvtColor(packed, rgb, cv::COLOR_BGR2RGB); break;
    case GST_VIDEO_FORMAT_RGBx:
    case GST_VIDEO_FORMAT_RGBA: cv::cvtColor(packed, rgb, cv::COLOR_RGBA2RGB); break;
    case GST_VIDEO_FORMAT_BGRx:
    case GST_VIDEO_FORMAT_BGRA: cv::cvtColor(packed, rgb, cv::COLOR_BGRA2RGB); break;
    case GST_VIDEO_FORMAT_xRGB:
    case GST_VIDEO_FORMAT_xBGR: {
      // No cvtColor code for a leading padding byte: pick the three colour bytes directly.
      const bool xrgb = format == GST_VIDEO_FORMAT_xRGB;
      const int from_to[] = {xrgb ? 1 : 3, 0, 2, 1, xrgb ? 3 : 1, 2};
      rgb.create(packed.rows, packed.cols, CV_8UC3);
      cv::mixChannels(&packed, 1, &rgb, 1, from_to, 3);
      break;
    }
    default: break;
  }
  return rgb;
}

// Bytes per pixel of a packed RGB-family format.
int packed_bytes(GstVideoFormat format) {
  return format == GST_VIDEO_FORMAT_RGB || format == GST_VIDEO_FORMAT_BGR ? 3 : 4;
}

// Packed RGB-family formats: convert just the rectangle.
cv::Mat packed_to_rgb(const GstVideoFrame& frame, const cv::Rect& rect) {
  const GstVideoFormat format = GST_VIDEO_FRAME_FORMAT(&frame);
  const int bytes = packed_bytes(format);
  return packed_pixels_to_rgb(plane_view(frame, 0, CV_8UC(bytes), rect, bytes), format);
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

// A 4:2:0 frame's (I420, NV12) luma `rect` and chroma `chroma`, brought to one size by `to_size_luma`
// and `to_size_chroma`, converted to RGB as the caps' colorimetry says.
template <typename LumaFn, typename ChromaFn>
cv::Mat yuv420_planes_to_rgb(const GstVideoFrame& frame, const cv::Rect& rect, const cv::Rect& chroma, LumaFn to_size_luma,
                             ChromaFn to_size_chroma) {
  std::vector<cv::Mat> planes{to_size_luma(plane_view(frame, 0, CV_8UC1, rect, 1))};
  if (GST_VIDEO_FRAME_FORMAT(&frame) == GST_VIDEO_FORMAT_NV12) {
    planes.push_back(to_size_chroma(plane_view(frame, 1, CV_8UC2, chroma, 2)));  // interleaved U, V
  } else {
    planes.push_back(to_size_chroma(plane_view(frame, 1, CV_8UC1, chroma, 1)));
    planes.push_back(to_size_chroma(plane_view(frame, 2, CV_8UC1, chroma, 1)));
  }
  cv::Mat yuv, rgb;
  cv::merge(planes, yuv);
  cv::transform(yuv, rgb, yuv_to_rgb_matrix(GST_VIDEO_INFO_COLORIMETRY(&frame.info)));
  return rgb;
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
  return yuv420_planes_to_rgb(frame, rect, chroma, [](const cv::Mat& luma) { return luma; }, doubled);
}

std::string format_text(const char* format, ...) G_GNUC_PRINTF(1, 2);
std::string format_text(const char* format, ...) {
  va_list args;
  va_start(args, format);
  gchar* text = g_strdup_vprintf(format, args);
  va_end(args);
  std::string out = text;
  g_free(text);
  return out;
}

// Why `plane` of a mapped frame does not fit its memory, or "" when it does. `map` holds the plane.
std::string plane_problem(const GstVideoFrame& frame, guint plane, const GstMapInfo& map) {
  gint components[GST_VIDEO_MAX_COMPONENTS];
  gst_video_format_info_component(frame.info.finfo, plane, components);
  const int comp = components[0];
  const guint64 rows = static_cast<guint>(GST_VIDEO_FRAME_COMP_HEIGHT(&frame, comp));
  const guint64 row_bytes = static_cast<guint64>(static_cast<guint>(GST_VIDEO_FRAME_COMP_WIDTH(&frame, comp))) *
                            static_cast<guint>(GST_VIDEO_FRAME_COMP_PSTRIDE(&frame, comp));
  const gint stride = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, plane);
  if (stride < 0 || static_cast<guint64>(stride) < row_bytes)
    return format_text("plane %u has stride %d, below its row of %" G_GUINT64_FORMAT " bytes", plane, stride,
                       row_bytes);
  const auto* data = static_cast<const guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, plane));
  if (data < map.data || data > map.data + map.size)
    return format_text("plane %u starts outside its memory of %" G_GSIZE_FORMAT " bytes", plane, map.size);
  const guint64 start = static_cast<guint64>(data - map.data);
  // rows and stride are below 2^31, so this cannot overflow.
  const guint64 needed = rows == 0 ? 0 : (rows - 1) * static_cast<guint64>(stride) + row_bytes;
  if (needed > map.size - start)
    return format_text("plane %u needs %" G_GUINT64_FORMAT " bytes at offset %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
                       " rows, stride %d), past the end of its %" G_GSIZE_FORMAT "-byte memory",
                       plane, needed, start, rows, stride, map.size);
  return {};
}

}  // namespace

bool ReadableFrame::map(const GstVideoInfo& info, GstBuffer* buffer, std::string* problem) {
  unmap();
  const GstVideoMeta* meta = gst_buffer_get_video_meta(buffer);
  // gst_video_frame_map only g_return_val_if_fail()s on a meta that contradicts the caps.
  if (meta && (meta->format != GST_VIDEO_INFO_FORMAT(&info) ||
               meta->width < static_cast<guint>(GST_VIDEO_INFO_WIDTH(&info)) ||
               meta->height < static_cast<guint>(GST_VIDEO_INFO_HEIGHT(&info)) ||
               meta->n_planes != GST_VIDEO_INFO_N_PLANES(&info))) {
    *problem = format_text("its GstVideoMeta (%s %ux%u, %u planes) does not match the caps (%u planes)",
                           gst_video_format_to_string(meta->format), meta->width, meta->height, meta->n_planes,
                           GST_VIDEO_INFO_N_PLANES(&info));
    return false;
  }
  if (!gst_video_frame_map(&frame_, const_cast<GstVideoInfo*>(&info), buffer, GST_MAP_READ)) {
    *problem = meta ? format_text("a plane offset of its GstVideoMeta lies outside the buffer of %" G_GSIZE_FORMAT
                                  " bytes",
                                  gst_buffer_get_size(buffer))
                    : format_text("it holds %" G_GSIZE_FORMAT " bytes, the caps describe %" G_GSIZE_FORMAT,
                                  gst_buffer_get_size(buffer), GST_VIDEO_INFO_SIZE(&info));
    return false;
  }
  mapped_ = true;
  // With a meta each plane has its own mapping; without one, map[0] holds the whole buffer.
  for (guint plane = 0; plane < GST_VIDEO_FRAME_N_PLANES(&frame_); ++plane) {
    *problem = plane_problem(frame_, plane, frame_.map[meta ? plane : 0]);
    if (!problem->empty()) {
      unmap();
      return false;
    }
  }
  return true;
}

void ReadableFrame::unmap() {
  if (mapped_) gst_video_frame_unmap(&frame_);
  mapped_ = false;
}

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

cv::Mat scaled_frame_rgb(const GstVideoFrame& frame, cv::Size size) {
  const int width = GST_VIDEO_FRAME_WIDTH(&frame), height = GST_VIDEO_FRAME_HEIGHT(&frame);
  const int interpolation = size.width <= width && size.height <= height ? cv::INTER_AREA : cv::INTER_LINEAR;
  auto scaled = [&](const cv::Mat& pixels) {
    cv::Mat out;
    cv::resize(pixels, out, size, 0, 0, interpolation);
    return out;
  };
  const GstVideoFormat format = GST_VIDEO_FRAME_FORMAT(&frame);
  const cv::Rect all(0, 0, width, height);
  if (format != GST_VIDEO_FORMAT_I420 && format != GST_VIDEO_FORMAT_NV12) {
    const int bytes = packed_bytes(format);
    return packed_pixels_to_rgb(scaled(plane_view(frame, 0, CV_8UC(bytes), all, bytes)), format);
  }
  // 4:2:0: each plane scaled to `size` on its own, then converted as the caps' colorimetry says.
  return yuv420_planes_to_rgb(frame, all, cv::Rect(0, 0, (width + 1) / 2, (height + 1) / 2), scaled, scaled);
}

Region square_with_margin(const PixelBox& box, double margin) {
  const double side = std::max(box.width, box.height) * (1.0 + 2.0 * margin);
  const double cx = box.x + box.width / 2.0, cy = box.y + box.height / 2.0;
  const gint64 s = std::max<gint64>(1, std::llround(side));
  return {std::llround(cx - s / 2.0), std::llround(cy - s / 2.0), s, s};
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

void region_to_chw(const GstVideoFrame& frame, const Region& region, int width, int height, ChannelOrder order,
                   std::vector<float>& chw) {
  const gint64 fw = GST_VIDEO_FRAME_WIDTH(&frame), fh = GST_VIDEO_FRAME_HEIGHT(&frame);
  const gint64 padded_limit = 4 * std::max(fw * fh, static_cast<gint64>(width) * height);
  if (region.width <= padded_limit / std::max<gint64>(1, region.height)) {
    // Such a region intersects the frame (as every face box does), so it fits an int rectangle.
    const cv::Rect rect(static_cast<int>(region.x), static_cast<int>(region.y), static_cast<int>(region.width),
                        static_cast<int>(region.height));
    to_normalised_chw(extract_rgb(frame, rect), width, height, order, chw);
    return;
  }
  // Far larger than the frame: scale just the part inside the frame to its place in the square.
  const gint64 x0 = std::clamp<gint64>(region.x, 0, fw), x1 = std::clamp<gint64>(region.x + region.width, 0, fw);
  const gint64 y0 = std::clamp<gint64>(region.y, 0, fh), y1 = std::clamp<gint64>(region.y + region.height, 0, fh);
  cv::Mat canvas(height, width, CV_8UC3, cv::Scalar::all(0));
  if (x1 > x0 && y1 > y0) {
    const double sx = static_cast<double>(width) / region.width, sy = static_cast<double>(height) / region.height;
    const int left = std::clamp(static_cast<int>(std::lround((x0 - region.x) * sx)), 0, width - 1);
    const int top = std::clamp(static_cast<int>(std::lround((y0 - region.y) * sy)), 0, height - 1);
    const int w = std::clamp(static_cast<int>(std::lround((x1 - x0) * sx)), 1, width - left);
    const int h = std::clamp(static_cast<int>(std::lround((y1 - y0) * sy)), 1, height - top);
    const cv::Mat inside = extract_rgb(frame, cv::Rect(static_cast<int>(x0), static_cast<int>(y0),
                                                       static_cast<int>(x1 - x0), static_cast<int>(y1 - y0)));
    cv::Mat place = canvas(cv::Rect(left, top, w, h));
    cv::resize(inside, place, place.size(), 0, 0, cv::INTER_AREA);
  }
  to_normalised_chw(canvas, width, height, order, chw);
}

void face_to_chw(const GstVideoFrame& frame, const FaceJob& face, double margin, int width, int height,
                 ChannelOrder order, std::vector<float>& chw) {
  const Region region = face.whole_buffer ? Region{0, 0, GST_VIDEO_FRAME_WIDTH(&frame), GST_VIDEO_FRAME_HEIGHT(&frame)}
                                          : square_with_margin(face.box, margin);
  region_to_chw(frame, region, width, height, order, chw);
}

}  // namespace taconite::gst

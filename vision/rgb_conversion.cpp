#include "rgb_conversion.hpp"

#include <opencv2/imgproc.hpp>
#include <vector>

namespace taconite::vision {

namespace {

// `rect` of one plane as an image header over the viewed memory (no copy; read only).
cv::Mat plane_view(const ImageView& image, int plane, int type, const cv::Rect& rect, int bytes_per_pixel) {
  const int stride = image.strides[static_cast<std::size_t>(plane)];
  // cv::Mat has no read-only header; the pixels are only ever read through it.
  auto* base = const_cast<std::uint8_t*>(image.planes[static_cast<std::size_t>(plane)]);
  const std::ptrdiff_t offset =
      static_cast<std::ptrdiff_t>(rect.y) * stride + static_cast<std::ptrdiff_t>(rect.x) * bytes_per_pixel;
  return cv::Mat(rect.height, rect.width, type, base + offset, static_cast<std::size_t>(stride));
}

// Plane-0 pixels (packed RGB family as `format` lays them out, or gray) to RGB.
cv::Mat packed_pixels_to_rgb(const cv::Mat& packed, PixelFormat format) {
  cv::Mat rgb;
  switch (format) {
    case PixelFormat::Rgb: packed.copyTo(rgb); break;
    case PixelFormat::Bgr: cv::cvtColor(packed, rgb, cv::COLOR_BGR2RGB); break;
    case PixelFormat::Rgbx:
    case PixelFormat::Rgba: cv::cvtColor(packed, rgb, cv::COLOR_RGBA2RGB); break;
    case PixelFormat::Bgrx:
    case PixelFormat::Bgra: cv::cvtColor(packed, rgb, cv::COLOR_BGRA2RGB); break;
    case PixelFormat::Xrgb:
    case PixelFormat::Xbgr: {
      // No cvtColor code for a leading padding byte: pick the three colour bytes directly.
      const bool xrgb = format == PixelFormat::Xrgb;
      const int from_to[] = {xrgb ? 1 : 3, 0, 2, 1, xrgb ? 3 : 1, 2};
      rgb.create(packed.rows, packed.cols, CV_8UC3);
      cv::mixChannels(&packed, 1, &rgb, 1, from_to, 3);
      break;
    }
    case PixelFormat::Gray8: cv::cvtColor(packed, rgb, cv::COLOR_GRAY2RGB); break;
    case PixelFormat::I420:
    case PixelFormat::Nv12: break;  // not packed: see yuv420_planes_to_rgb
  }
  return rgb;
}

// Packed RGB-family (and gray) formats: convert just the rectangle.
cv::Mat packed_to_rgb(const ImageView& image, const cv::Rect& rect) {
  const int bytes = plane0_bytes(image.format);
  return packed_pixels_to_rgb(plane_view(image, 0, CV_8UC(bytes), rect, bytes), image.format);
}

// Y'CbCr -> R'G'B' as the image's colour says, as a 3x4 matrix on (Y, U, V, 1): the matrix's Kr/Kb
// and limited (16-235/240) or full range. OpenCV's own 4:2:0 converters know only BT.601 limited range.
cv::Matx34f yuv_to_rgb_matrix(const YuvColour& colour) {
  const double kr = colour.kr, kb = colour.kb;
  const bool full = colour.full_range;
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

// A 4:2:0 image's (I420, NV12) luma `rect` and chroma `chroma`, brought to one size by `to_size_luma`
// and `to_size_chroma`, converted to RGB as its colour says.
template <typename LumaFn, typename ChromaFn>
cv::Mat yuv420_planes_to_rgb(const ImageView& image, const cv::Rect& rect, const cv::Rect& chroma, LumaFn to_size_luma,
                             ChromaFn to_size_chroma) {
  std::vector<cv::Mat> planes{to_size_luma(plane_view(image, 0, CV_8UC1, rect, 1))};
  if (image.format == PixelFormat::Nv12) {
    planes.push_back(to_size_chroma(plane_view(image, 1, CV_8UC2, chroma, 2)));  // interleaved U, V
  } else {
    planes.push_back(to_size_chroma(plane_view(image, 1, CV_8UC1, chroma, 1)));
    planes.push_back(to_size_chroma(plane_view(image, 2, CV_8UC1, chroma, 1)));
  }
  cv::Mat yuv, rgb;
  cv::merge(planes, yuv);
  cv::transform(yuv, rgb, yuv_to_rgb_matrix(image.colour));
  return rgb;
}

// 4:2:0 formats (I420, NV12): each pixel takes the chroma of its 2x2 block (the chroma covering
// the rectangle, doubled with INTER_NEAREST), converted as the image's colour says.
cv::Mat yuv420_to_rgb(const ImageView& image, const cv::Rect& rect) {
  const int cx0 = rect.x / 2, cy0 = rect.y / 2;
  const cv::Rect chroma(cx0, cy0, (rect.x + rect.width + 1) / 2 - cx0, (rect.y + rect.height + 1) / 2 - cy0);
  const cv::Rect in_doubled(rect.x - 2 * cx0, rect.y - 2 * cy0, rect.width, rect.height);
  auto doubled = [&](const cv::Mat& plane) {
    cv::Mat up;
    cv::resize(plane, up, cv::Size(), 2.0, 2.0, cv::INTER_NEAREST);
    return up(in_doubled);
  };
  return yuv420_planes_to_rgb(image, rect, chroma, [](const cv::Mat& luma) { return luma; }, doubled);
}

}  // namespace

cv::Mat extract_rgb(const ImageView& image, const cv::Rect& region) {
  const cv::Rect inside = region & cv::Rect(0, 0, image.width, image.height);
  cv::Mat pixels;
  if (!inside.empty()) pixels = is_yuv420(image.format) ? yuv420_to_rgb(image, inside) : packed_to_rgb(image, inside);
  if (inside == region && !pixels.empty()) return pixels;
  cv::Mat padded(region.height, region.width, CV_8UC3, cv::Scalar::all(0));
  if (!pixels.empty()) pixels.copyTo(padded(cv::Rect(inside.x - region.x, inside.y - region.y, inside.width, inside.height)));
  return padded;
}

cv::Mat scaled_frame_rgb(const ImageView& image, cv::Size size) {
  const int width = image.width, height = image.height;
  const int interpolation = size.width <= width && size.height <= height ? cv::INTER_AREA : cv::INTER_LINEAR;
  auto scaled = [&](const cv::Mat& pixels) {
    cv::Mat out;
    cv::resize(pixels, out, size, 0, 0, interpolation);
    return out;
  };
  const cv::Rect all(0, 0, width, height);
  if (!is_yuv420(image.format)) {
    const int bytes = plane0_bytes(image.format);
    return packed_pixels_to_rgb(scaled(plane_view(image, 0, CV_8UC(bytes), all, bytes)), image.format);
  }
  // 4:2:0: each plane scaled to `size` on its own, then converted as the image's colour says.
  return yuv420_planes_to_rgb(image, all, cv::Rect(0, 0, (width + 1) / 2, (height + 1) / 2), scaled, scaled);
}

}  // namespace taconite::vision

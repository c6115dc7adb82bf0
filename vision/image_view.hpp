// A read-only view of an image in memory: its pixel format, size and planes (pointer + stride),
// and for Y'CbCr how its colours convert. It owns nothing: whoever made it (a mapped video frame, a
// decoded photo) keeps the pixels alive while the view is used. Every vision/ function that reads
// pixels takes one, so elements, tools and benches hand the same front end their own memory.
#pragma once

#include <array>
#include <cstdint>

namespace taconite::vision {

// The layouts the face front end reads. Packed RGB family: 3 or 4 bytes a pixel in the named byte
// order (x: a padding byte). I420: Y, U, V planes; NV12: Y and interleaved UV planes (both 4:2:0).
// Gray8: one byte of full-range gray a pixel.
enum class PixelFormat { Rgb, Bgr, Rgbx, Bgrx, Xrgb, Xbgr, Rgba, Bgra, I420, Nv12, Gray8 };

// How Y'CbCr (I420, NV12) converts to R'G'B': the matrix's luma weights of red and blue (BT.601's by
// default) and whether luma spans 0-255 (full) or 16-235 with chroma 16-240 (limited).
struct YuvColour {
  double kr = 0.299, kb = 0.114;
  bool full_range = false;
};

struct ImageView {
  PixelFormat format = PixelFormat::Rgb;
  int width = 0, height = 0;
  // Plane 0 is the packed pixels, the luma or the gray; planes 1 and 2 the chroma of I420 (U, V)
  // or NV12 (UV in plane 1). Each plane holds its rows `strides[i]` bytes apart.
  std::array<const std::uint8_t*, 3> planes{};
  std::array<int, 3> strides{};
  YuvColour colour;  // I420 and NV12 only
};

// 4:2:0 Y'CbCr (I420, NV12).
constexpr bool is_yuv420(PixelFormat format) { return format == PixelFormat::I420 || format == PixelFormat::Nv12; }

// Formats whose plane 0 holds one byte a pixel (the luma, or the gray).
constexpr bool has_luma_plane(PixelFormat format) { return is_yuv420(format) || format == PixelFormat::Gray8; }

// Bytes a pixel of plane 0.
constexpr int plane0_bytes(PixelFormat format) {
  if (has_luma_plane(format)) return 1;
  return format == PixelFormat::Rgb || format == PixelFormat::Bgr ? 3 : 4;
}

// The byte offsets of R, G and B within a packed RGB-family pixel ({0, 0, 0} for the others).
constexpr std::array<int, 3> rgb_offsets(PixelFormat format) {
  switch (format) {
    case PixelFormat::Rgb:
    case PixelFormat::Rgbx:
    case PixelFormat::Rgba: return {0, 1, 2};
    case PixelFormat::Bgr:
    case PixelFormat::Bgrx:
    case PixelFormat::Bgra: return {2, 1, 0};
    case PixelFormat::Xrgb: return {1, 2, 3};
    case PixelFormat::Xbgr: return {3, 2, 1};
    default: return {0, 0, 0};
  }
}

}  // namespace taconite::vision

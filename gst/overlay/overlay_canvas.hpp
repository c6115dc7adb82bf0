// The planes of a mapped video frame as OpenCV drawing targets, so one drawing call paints every
// format taconiteoverlay takes in the right colour: packed RGB-family pixels get the colour's bytes
// in their order; I420 and NV12 get its luma on the Y plane and its chroma on the half-resolution
// chroma planes (the shapes drawn again at half scale), converted with the frame's Y'CbCr matrix
// and range. Every coordinate is clipped to the frame first, so no box or point, however far
// outside, makes work or touches memory beyond it.
#pragma once

#include <cstdint>
#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "image_view.hpp"

namespace taconite::gst {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
};

// A rectangle in frame pixels; 64-bit so ROI boxes of any guint size cannot overflow.
struct PixelRect {
  std::int64_t x = 0, y = 0, width = 0, height = 0;
};

class OverlayCanvas {
 public:
  // The frame's planes (plane 0: packed pixels or luma; I420: 1 = U, 2 = V; NV12: 1 = UV) with
  // their own sizes (a 4:2:0 chroma plane is (width + 1) / 2 x (height + 1) / 2). The memory stays
  // the caller's: valid while the frame is mapped for writing.
  OverlayCanvas(const vision::ImageView& view, const std::vector<std::uint8_t*>& planes,
                const std::vector<cv::Size>& plane_sizes);

  int width() const { return width_; }
  int height() const { return height_; }

  // Fills the part of `rect` inside the frame (on 4:2:0 chroma: every chroma sample it touches).
  void fill(const PixelRect& rect, Rgb colour);
  // A filled disc; nothing when the centre is not finite or lies outside the frame.
  void dot(double x, double y, int radius, Rgb colour);
  // `text` in OpenCV's Hershey simplex font, its baseline's left end at (x, y) (inside the frame).
  void text(const std::string& text, int x, int y, double scale, int thickness, Rgb colour);

 private:
  enum class Channels { Packed, Luma, Cb, Cr, CbCr };
  struct Plane {
    cv::Mat pixels;
    int divisor;  // 1: frame resolution; 2: 4:2:0 chroma
    Channels channels;
  };
  cv::Scalar value(const Plane& plane, Rgb colour) const;

  vision::ImageView view_;
  int width_, height_;
  std::vector<Plane> planes_;
};

}  // namespace taconite::gst

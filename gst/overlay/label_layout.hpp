// Where taconiteoverlay puts the label bands of one frame, so neighbouring faces' labels stay
// readable: each band goes to the first of a few places near its face that overlaps no band placed
// before on the same frame. The work is bounded: kLabelPlaces places tried, each against the bands
// already placed (at most max-rois per frame).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "overlay_canvas.hpp"

namespace taconite::gst {

// The places tried per label: above the box, below it, inside its top edge, then further up and
// further down by 1..3 band heights.
inline constexpr std::size_t kLabelPlaces = 9;

class LabelLayout {
 public:
  LabelLayout(std::int64_t frame_width, std::int64_t frame_height);

  // The band (`band_width` x `band_height`) of the face whose box is `box`, inside the frame
  // (left-aligned with the box; at the frame's left edge when wider than the frame). Above the box
  // when it fits, else below it when it fits, else inside its top edge; shifted further when that
  // overlaps a band placed before. When every place overlaps, the first is taken. The band is
  // remembered for the next calls.
  PixelRect place(const PixelRect& box, std::int64_t band_width, std::int64_t band_height);

 private:
  bool overlaps_placed(const PixelRect& band) const;
  PixelRect inside_frame(std::int64_t left, std::int64_t top, std::int64_t band_width,
                         std::int64_t band_height) const;

  std::int64_t width_, height_;
  std::vector<PixelRect> placed_;
};

// True when the two rectangles share a pixel (an empty one shares none).
bool rects_intersect(const PixelRect& a, const PixelRect& b);

}  // namespace taconite::gst

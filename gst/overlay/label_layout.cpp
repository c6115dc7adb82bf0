#include "label_layout.hpp"

#include <algorithm>
#include <array>

namespace taconite::gst {

bool rects_intersect(const PixelRect& a, const PixelRect& b) {
  if (a.width <= 0 || a.height <= 0 || b.width <= 0 || b.height <= 0) return false;
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

LabelLayout::LabelLayout(std::int64_t frame_width, std::int64_t frame_height)
    : width_(frame_width), height_(frame_height) {}

bool LabelLayout::overlaps_placed(const PixelRect& band) const {
  return std::any_of(placed_.begin(), placed_.end(), [&](const PixelRect& other) { return rects_intersect(band, other); });
}

PixelRect LabelLayout::inside_frame(std::int64_t left, std::int64_t top, std::int64_t band_width,
                                    std::int64_t band_height) const {
  left = std::clamp<std::int64_t>(left, 0, std::max<std::int64_t>(width_ - band_width, 0));
  top = std::clamp<std::int64_t>(top, 0, std::max<std::int64_t>(height_ - band_height, 0));
  return {left, top, band_width, band_height};
}

PixelRect LabelLayout::place(const PixelRect& box, std::int64_t band_width, std::int64_t band_height) {
  const std::int64_t above = box.y - band_height, below = box.y + box.height;
  // The first place: above when it fits in the frame, else below when that fits, else inside the top.
  std::int64_t first = box.y;
  if (above >= 0)
    first = above;
  else if (below + band_height <= height_)
    first = below;
  const std::array<std::int64_t, kLabelPlaces> tops{
      first,           below,           box.y,           above - band_height, below + band_height,
      above - 2 * band_height, below + 2 * band_height, above - 3 * band_height, below + 3 * band_height};
  PixelRect chosen = inside_frame(box.x, first, band_width, band_height);
  for (const std::int64_t top : tops) {
    const PixelRect band = inside_frame(box.x, top, band_width, band_height);
    if (!overlaps_placed(band)) {
      chosen = band;
      break;
    }
  }
  placed_.push_back(chosen);
  return chosen;
}

}  // namespace taconite::gst

#include "box_geometry.hpp"

#include <algorithm>

namespace taconite::vision {

double iou(const Box& a, const Box& b) {
  const double w = std::min(a.x + a.width, b.x + b.width) - std::max(a.x, b.x);
  const double h = std::min(a.y + a.height, b.y + b.height) - std::max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0.0;
  const double overlap = w * h;
  return overlap / (a.width * a.height + b.width * b.height - overlap);
}

std::optional<Box> inside(const Box& box, const Box& frame) {
  const double left = std::max(box.x, frame.x), top = std::max(box.y, frame.y);
  const double right = std::min(box.x + box.width, frame.x + frame.width);
  const double bottom = std::min(box.y + box.height, frame.y + frame.height);
  if (!(right - left >= 1.0 && bottom - top >= 1.0)) return std::nullopt;  // NaN included
  return Box{left, top, right - left, bottom - top};
}

}  // namespace taconite::vision

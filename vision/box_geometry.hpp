// Boxes in image pixels and their overlap: what the tracker (box_tracker.hpp) and taconitedetect's
// carried detections compare. Apart from the tracker, which needs dlib, so that a build without
// dlib keeps them.
#pragma once

#include <optional>

namespace taconite::vision {

struct Box {
  double x = 0, y = 0, width = 0, height = 0;  // pixels; width and height > 0
};

// Intersection over union of two boxes (0 when either is empty).
double iou(const Box& a, const Box& b);

// The part of `box` inside `frame`, or none when less than one pixel wide or high of it is inside
// (or it is not finite).
std::optional<Box> inside(const Box& box, const Box& frame);

}  // namespace taconite::vision

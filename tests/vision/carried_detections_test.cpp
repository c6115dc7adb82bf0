// CarriedDetections: a detection on one frame in `interval`, carried over the frames between.
#include <gtest/gtest.h>

#include "carried_detections.hpp"

namespace {

using taconite::vision::CarriedDetections;

// The frames of `frames` on which the detector runs when the interval of frame f is interval(f).
template <typename Interval>
std::vector<int> due_frames(int frames, Interval interval) {
  CarriedDetections<int> faces;
  std::vector<int> due;
  for (int frame = 0; frame < frames; ++frame) {
    if (faces.due(interval(frame))) {
      due.push_back(frame);
      faces.detected({frame});
    }
    EXPECT_EQ(faces.take(), std::vector<int>{due.back()}) << "frame " << frame;
  }
  return due;
}

TEST(CarriedDetections, DetectsOnOneFrameInIntervalAndCarriesTheFacesBetween) {
  EXPECT_EQ(due_frames(7, [](int) { return 3u; }), (std::vector<int>{0, 3, 6}));
}

TEST(CarriedDetections, AnIntervalChangeAppliesFromTheNextFrame) {
  // Lowered from 1000 to 1 on frame 4: frame 4 detects, and every frame after.
  EXPECT_EQ(due_frames(7, [](int f) { return f < 4 ? 1000u : 1u; }), (std::vector<int>{0, 4, 5, 6}));
  // Lowered from 10 to 3 on frame 5, five frames after the last detection: 5 detects, then every 3rd.
  EXPECT_EQ(due_frames(12, [](int f) { return f < 5 ? 10u : 3u; }), (std::vector<int>{0, 5, 8, 11}));
  // Raised from 2 to 5 on frame 3: the detection of frame 2 is carried until frame 7.
  EXPECT_EQ(due_frames(9, [](int f) { return f < 3 ? 2u : 5u; }), (std::vector<int>{0, 2, 7}));
}

TEST(CarriedDetections, ResetForgetsTheFacesAndDetectsOnTheNextFrame) {
  CarriedDetections<int> faces;
  faces.detected({1, 2});
  EXPECT_EQ(faces.take().size(), 2u);
  EXPECT_FALSE(faces.due(5));
  faces.reset();
  EXPECT_TRUE(faces.due(5));
  EXPECT_TRUE(faces.take().empty());
}

}  // namespace

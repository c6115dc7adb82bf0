// CarriedDetections: a detection on one frame in `interval`, carried over the frames between.
#include <gtest/gtest.h>

#include "carried_detections.hpp"

namespace {

using taconite::vision::CarriedDetections;

TEST(CarriedDetections, DetectsOnOneFrameInIntervalAndCarriesTheFacesBetween) {
  CarriedDetections<int> faces;
  std::vector<int> due_frames;
  for (int frame = 0; frame < 7; ++frame) {
    if (faces.due()) {
      due_frames.push_back(frame);
      faces.detected({frame}, 3);
    }
    EXPECT_EQ(faces.take(), std::vector<int>{due_frames.back()}) << "frame " << frame;
  }
  EXPECT_EQ(due_frames, (std::vector<int>{0, 3, 6}));
}

TEST(CarriedDetections, ResetForgetsTheFacesAndDetectsOnTheNextFrame) {
  CarriedDetections<int> faces;
  faces.detected({1, 2}, 5);
  EXPECT_EQ(faces.take().size(), 2u);
  EXPECT_FALSE(faces.due());
  faces.reset();
  EXPECT_TRUE(faces.due());
  EXPECT_TRUE(faces.take().empty());
}

}  // namespace

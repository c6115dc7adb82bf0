// BoxTracker fed the way taconitedetect interval=N ! taconitetrack feeds it, on a face that leaves
// the frame between two detections (issue 29, bug 9): every carried (stale) box comes back either
// predicted inside the frame or to be dropped, never as it came, and the face keeps one id (its
// last detection, a 40 px sliver at the edge, matched against the prediction clipped to the frame;
// compared unclipped it started a second track).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <set>
#include <vector>

#include "box_tracker.hpp"
#include "carried_detections.hpp"

namespace {

using taconite::vision::Box;
using taconite::vision::BoxTracker;
using taconite::vision::CarriedDetections;
using taconite::vision::Detection;
using taconite::vision::inside;
using taconite::vision::TrackerPolicy;

constexpr Box kFrame{0, 0, 640, 360};
constexpr double kSize = 200, kSpeed = 20;  // a 200 px face moving right at 20 px per frame
constexpr unsigned kInterval = 5;          // the detector runs on one frame in 5

// What the detector reports on frame `t`: the visible part of the face, while 10 pixels of it are.
std::vector<Box> detector_boxes(int t) {
  const Box face{kSpeed * t, 80, kSize, kSize};
  const std::optional<Box> visible = inside(face, kFrame);
  if (!visible || visible->width < 10) return {};
  return {*visible};
}

class FaceLeavingTheFrame : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(FaceLeavingTheFrame, EveryCarriedBoxIsPredictedInsideTheFrameOrDropped) {
  TrackerPolicy policy;
  policy.min_hits = GetParam();
  BoxTracker tracker;
  CarriedDetections<Box> carried;
  std::set<std::int64_t> ids;
  int predicted = 0, dropped = 0;
  for (int t = 0; t < 40; ++t) {
    const bool fresh = carried.due(kInterval);
    if (fresh) carried.detected(detector_boxes(t));
    std::vector<Detection> detections;
    for (const Box& box : carried.take()) detections.push_back(Detection{box, 0.9, fresh});
    const auto results = tracker.update(detections, policy, kFrame);
    ASSERT_EQ(results.size(), detections.size());
    for (std::size_t d = 0; d < results.size(); ++d) {
      if (results[d].id) ids.insert(*results[d].id);
      if (fresh) {
        EXPECT_FALSE(results[d].drop) << "frame " << t << ": a measurement is never dropped";
        EXPECT_FALSE(results[d].predicted) << "frame " << t;
        continue;
      }
      // A carried box: moved (and inside the frame) or dropped, nothing in between.
      EXPECT_NE(results[d].predicted.has_value(), results[d].drop) << "frame " << t;
      if (results[d].predicted) {
        ++predicted;
        EXPECT_TRUE(inside(*results[d].predicted, kFrame)) << "frame " << t;
        if (t > 10) {  // two detections gave the filter its velocity
          EXPECT_GT(results[d].predicted->x, detections[d].box.x) << "frame " << t << ": moved on with the face";
        }
      } else {
        ++dropped;
        EXPECT_FALSE(results[d].id) << "frame " << t;
      }
    }
  }
  EXPECT_GT(predicted, 0);
  EXPECT_GT(dropped, 0) << "the face left the frame between two detections";
  EXPECT_EQ(ids.size(), 1u) << "one face, one id";
}

INSTANTIATE_TEST_SUITE_P(MinHits, FaceLeavingTheFrame, ::testing::Values(1u, 2u, 3u));

TEST(BoxTrackerStale, ACarriedBoxNoTrackClaimsIsDropped) {
  BoxTracker tracker;
  const TrackerPolicy policy;
  const auto results = tracker.update({Detection{{100, 100, 40, 40}, 0.9, false}}, policy, kFrame);
  EXPECT_TRUE(results[0].drop);
  EXPECT_FALSE(results[0].predicted);
  EXPECT_FALSE(results[0].id);
}

TEST(BoxTrackerStale, InsideKeepsAtLeastAPixelAndRefusesTheRest) {
  constexpr Box small{0, 0, 320, 240};
  EXPECT_FALSE(inside({319.5, 10, 40, 40}, small)) << "half a pixel inside";
  EXPECT_FALSE(inside({-40, 10, 40, 40}, small));
  EXPECT_FALSE(inside({std::nan(""), 10, 40, 40}, small));
  const std::optional<Box> edge = inside({300, -10, 40, 40}, small);
  ASSERT_TRUE(edge);
  EXPECT_DOUBLE_EQ(edge->x, 300);
  EXPECT_DOUBLE_EQ(edge->y, 0);
  EXPECT_DOUBLE_EQ(edge->width, 20);
  EXPECT_DOUBLE_EQ(edge->height, 30);
}

}  // namespace

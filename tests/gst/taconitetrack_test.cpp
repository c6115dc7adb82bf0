// taconitetrack with synthetic box sequences pushed as ROI metas through GstHarness: ids stay with
// a moving face and with crossing faces, come back within max-age and not after, are never
// reused, wait for min-hits, end at a hard scene cut (not at a pan); flush, STREAM_START and a
// frame-size change forget the tracks; many
// and out-of-frame ROIs are bounded; buffers are written in place; and taconiteadaface downstream
// reuses embeddings per tracked id.
#include <gst/taconite/gsttaconiteface.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <set>

#include "box_tracker.hpp"
#include "roi_landmarks.hpp"
#include "gst_test_support.hpp"
#include "roi_params.hpp"
#include "roi_track_param.hpp"

namespace {

using namespace gsttest;
using taconite::gst::roi_track_id;

const char* kCaps = "video/x-raw,format=RGB,width=320,height=240,framerate=30/1";

struct Roi {
  guint x, y, w, h;
  const char* type = "face";
};

// A 320x240 RGB frame (black; the tracker never reads pixels) with the given ROIs in order.
GstBuffer* frame(int index, const std::vector<Roi>& rois, int width = 320, int height = 240) {
  GstBuffer* buffer = gst_buffer_new_allocate(nullptr, static_cast<gsize>(width) * height * 3, nullptr);
  gst_buffer_memset(buffer, 0, 0, gst_buffer_get_size(buffer));
  GST_BUFFER_PTS(buffer) = index * kFrame;
  GST_BUFFER_DURATION(buffer) = kFrame;
  for (const Roi& r : rois) gst_buffer_add_video_region_of_interest_meta(buffer, r.type, r.x, r.y, r.w, r.h);
  return buffer;
}

std::vector<GstVideoRegionOfInterestMeta*> rois_of(GstBuffer* buffer) {
  std::vector<GstVideoRegionOfInterestMeta*> rois;
  gpointer state = nullptr;
  while (GstMeta* m = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    rois.push_back(reinterpret_cast<GstVideoRegionOfInterestMeta*>(m));
  return rois;
}

// The id each ROI carries, read the way taconiteadaface reads it by default.
std::vector<std::optional<gint64>> ids_of(GstBuffer* buffer) {
  std::vector<std::optional<gint64>> ids;
  for (GstVideoRegionOfInterestMeta* roi : rois_of(buffer)) ids.push_back(roi_track_id(roi, "object_id"));
  return ids;
}

class TaconiteTrackTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (h) gst_harness_teardown(h);
  }
  void start(const std::vector<std::pair<std::string, std::string>>& properties = {}, const char* caps = kCaps) {
    h = gst_harness_new("taconitetrack");
    ASSERT_NE(h, nullptr);
    for (const auto& [name, value] : properties)
      gst_util_set_object_arg(G_OBJECT(h->element), name.c_str(), value.c_str());
    gst_harness_set_src_caps_str(h, caps);
  }
  // Pushes a frame and returns the id of each of its ROIs.
  std::vector<std::optional<gint64>> push(GstBuffer* in) {
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    EXPECT_NE(out, nullptr);
    if (!out) return {};
    auto ids = ids_of(out);
    gst_buffer_unref(out);
    return ids;
  }
  std::optional<gint64> push_one(int index, const Roi& roi) {
    const auto ids = push(frame(index, {roi}));
    EXPECT_EQ(ids.size(), 1u);
    return ids.empty() ? std::nullopt : ids[0];
  }
  void flush() {
    ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_start()));
    ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_TIME);
    ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_segment(&segment)));
  }
  GstHarness* h = nullptr;
};

// A taconitedetect-style face ROI: a `detection` param (confidence, fresh) and 5 landmarks at
// fixed places inside the box.
GstBuffer* detector_frame(int index, double x, double y, double size, bool fresh, double confidence = 0.9) {
  GstBuffer* buffer = frame(index, {});
  GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(
      buffer, "face", static_cast<guint>(x), static_cast<guint>(y), static_cast<guint>(size), static_cast<guint>(size));
  // Written by hand, not with gst_taconite_roi_set_detection: the NaN confidence must reach the tracker.
  gst_video_region_of_interest_meta_add_param(roi, gst_structure_new("detection", "confidence", G_TYPE_DOUBLE, confidence,
                                                                     "label", G_TYPE_STRING, "face", "fresh",
                                                                     G_TYPE_BOOLEAN, fresh, nullptr));
  const std::vector<taconite::gst::Point2> points = {{x + 0.3 * size, y + 0.4 * size}, {x + 0.7 * size, y + 0.4 * size},
                                                     {x + 0.5 * size, y + 0.6 * size}, {x + 0.35 * size, y + 0.8 * size},
                                                     {x + 0.65 * size, y + 0.8 * size}};
  taconite::gst::set_roi_points(roi, "landmarks", points);
  return buffer;
}

TEST_F(TaconiteTrackTest, ADetectionParamWithoutAConfidenceIsTrustedAsDocumented) {
  // A foreign detector's `detection` param may carry only a label: its box counts as confidence 1.
  start();
  std::vector<std::optional<gint64>> ids;
  for (int i = 0; i < 4; ++i) {
    GstBuffer* buffer = frame(i, {});
    GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(buffer, "face", 100, 80, 50, 50);
    gst_video_region_of_interest_meta_add_param(roi, gst_structure_new("detection", "label", G_TYPE_STRING, "face", nullptr));
    ids = push(buffer);
  }
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids[0], 1);
}

TEST_F(TaconiteTrackTest, StaleDetectorRoisCarryThePredictedBoxMovedLandmarksAndTheTracksId) {
  // Detected every 3rd frame (taconitedetect interval=3): fresh at 4 px per frame, then the
  // detector carries the last box twice; the tracker moves it on along the track.
  start();
  constexpr double kSpeed = 4.0, kSize = 60.0;
  std::optional<gint64> id;
  for (int i = 0; i < 30; ++i) {
    const bool fresh = i % 3 == 0;
    const int detected_at = i - i % 3;
    GstBuffer* out = gst_harness_push_and_pull(h, detector_frame(i, 20 + kSpeed * detected_at, 50, kSize, fresh));
    ASSERT_NE(out, nullptr);
    const auto rois = rois_of(out);
    ASSERT_EQ(rois.size(), 1u);
    GstVideoRegionOfInterestMeta* roi = rois[0];
    const GstStructure* detection = gst_video_region_of_interest_meta_get_param(roi, "detection");
    gboolean predicted = FALSE;
    const bool marked = gst_structure_get_boolean(detection, "predicted", &predicted) && predicted;
    const double truth_x = 20 + kSpeed * i;
    if (fresh) {
      EXPECT_FALSE(marked) << "frame " << i;
      EXPECT_EQ(roi->x, static_cast<guint>(truth_x)) << "frame " << i << ": a fresh box is never moved";
    } else if (i >= 3) {  // a track to predict from
      EXPECT_TRUE(marked) << "frame " << i;
      // Once the filter has its velocity (a few detections), the box is moved on with the face,
      // within 3 pixels, not left where it was detected.
      if (i >= 15) {
        EXPECT_NEAR(roi->x, truth_x, 3.0) << "frame " << i;
        EXPECT_GT(roi->x, static_cast<guint>(20 + kSpeed * detected_at)) << "frame " << i;
      }
      EXPECT_NEAR(roi->y, 50, 2.0);
      EXPECT_NEAR(roi->w, kSize, 3.0);
      const auto landmarks = taconite::gst::roi_landmarks(roi);
      ASSERT_EQ(landmarks.size(), 5u);
      EXPECT_NEAR(landmarks[0].x, roi->x + 0.3 * roi->w, 1.5) << "landmarks move with the box";
      EXPECT_NEAR(landmarks[4].y, roi->y + 0.8 * roi->h, 1.5);
    }
    const auto roi_id = roi_track_id(roi, "object_id");
    if (i >= 6) {  // fresh at 0, 3, 6: three detections confirm the track (min-hits=3)
      ASSERT_TRUE(roi_id) << "frame " << i;
      if (id) {
        EXPECT_EQ(*roi_id, *id) << "frame " << i;
      }
      id = roi_id;
    }
    gst_buffer_unref(out);
  }
}

TEST(BoxTrackerTest, StaleFramesNeitherMissNorHitTracksAndKeepVelocitiesPerFrame) {
  using taconite::vision::Box;
  using taconite::vision::BoxTracker;
  using taconite::vision::Detection;
  BoxTracker tracker;
  const taconite::vision::TrackerPolicy policy;
  constexpr int kFresh = 20;
  for (int i = 0; i < kFresh; ++i) tracker.update({Detection{{10.0 + 5 * i, 10, 40, 40}}}, policy);
  // 40 stale frames (more than max-age) neither miss nor end the track; it moves on at the
  // velocity the filter learnt (5 pixels per frame, up to its estimation error).
  const Box carried{10.0 + 5 * (kFresh - 1), 10, 40, 40};
  for (int i = kFresh; i < kFresh + 40; ++i) {
    const auto result = tracker.update({Detection{carried, 0.9, false}}, policy);
    ASSERT_TRUE(result[0].predicted) << "frame " << i;
    EXPECT_NEAR(result[0].predicted->x, 10.0 + 5 * i, 1.0 + 0.1 * (i - kFresh)) << "frame " << i;
    EXPECT_EQ(result[0].id, 1);
  }
  const auto unclaimed = tracker.update({Detection{{300, 10, 40, 40}, 0.9, false}}, policy);
  EXPECT_EQ(unclaimed[0].predicted, std::nullopt);
  EXPECT_TRUE(unclaimed[0].drop) << "a stale box no track was measured at is to be removed";
}

TEST_F(TaconiteTrackTest, WeakOrMeaninglessConfidencesNeverStartTracks) {
  // Below low-threshold, between the thresholds (no track to continue) and NaN: never an id.
  start();
  for (const double confidence : {0.05, 0.3, std::nan("")}) {
    for (int i = 0; i < 6; ++i) {
      const auto ids = push(detector_frame(i, 100, 80, 50, true, confidence));
      ASSERT_EQ(ids.size(), 1u);
      EXPECT_FALSE(ids[0]) << "confidence " << confidence << ", frame " << i;
    }
  }
  for (int i = 0; i < 3; ++i) push(detector_frame(i, 100, 80, 50, true, 0.9));
  EXPECT_EQ(push(detector_frame(3, 101, 80, 50, true, 0.3))[0], 1) << "a weak box continues a confirmed track";
}

TEST_F(TaconiteTrackTest, AStalePredictionLeavingTheFrameRemovesTheCarriedRoi) {
  // A face leaving on the right at 12 px per frame, then carried: the prediction moves the box to
  // the frame's edge, never past it, and once nothing of it is left inside the carried ROI is
  // removed, never passed on as it came (unmoved and unflagged).
  start();
  for (int i = 0; i < 10; ++i) push(detector_frame(i, 152 + 12 * i, 80, 50, true));
  bool left = false;
  for (int i = 10; i < 30; ++i) {
    GstBuffer* out = gst_harness_push_and_pull(h, detector_frame(i, 260, 80, 50, false));
    const auto rois = rois_of(out);
    if (rois.empty()) {
      left = true;
    } else {
      ASSERT_EQ(rois.size(), 1u);
      EXPECT_FALSE(left) << "frame " << i;
      gboolean predicted = FALSE;
      gst_structure_get_boolean(gst_video_region_of_interest_meta_get_param(rois[0], "detection"), "predicted",
                                &predicted);
      EXPECT_TRUE(predicted) << "frame " << i;
      EXPECT_LE(rois[0]->x + rois[0]->w, 320u) << "frame " << i << ": clipped to the frame";
      EXPECT_GE(rois[0]->w, 1u);
    }
    gst_buffer_unref(out);
  }
  EXPECT_TRUE(left) << "the prediction left the frame";
}

// Issue 29, bug 9: a 200 px face leaving a 640x360 frame at 20 px per frame, detected on one frame
// in 5 (the detector reports the visible part of the face, and carries it marked fresh=false).
// Every ROI that comes out is a measurement or a prediction inside the frame; the carried ROIs the
// tracker cannot predict are removed; the face has one id throughout.
TEST_F(TaconiteTrackTest, AFaceLeavingBetweenDetectionsLeavesNoUnpredictedCarriedRoi) {
  for (const char* min_hits : {"1", "3"}) {
    start({{"min-hits", min_hits}}, "video/x-raw,format=RGB,width=640,height=360,framerate=30/1");
    std::set<gint64> ids;
    int removed = 0;
    std::vector<Roi> carried;
    for (int i = 0; i < 40; ++i) {
      const bool fresh = i % 5 == 0;
      if (fresh) {  // the detector's box: the visible part, while 10 pixels of the face show
        const guint x = 20 * i, visible = x < 640 ? std::min(200u, 640 - x) : 0;
        carried.clear();
        if (visible >= 10) carried.push_back({x, 80, visible, 200});
      }
      GstBuffer* in = frame(i, carried, 640, 360);
      for (GstVideoRegionOfInterestMeta* roi : rois_of(in))
        ASSERT_TRUE(gst_taconite_roi_set_detection(roi, 0.9) && gst_taconite_roi_set_fresh(roi, fresh));
      const bool had_roi = !carried.empty();
      GstBuffer* out = gst_harness_push_and_pull(h, in);
      ASSERT_NE(out, nullptr);
      const auto rois = rois_of(out);
      if (had_roi && rois.empty()) ++removed;
      for (GstVideoRegionOfInterestMeta* roi : rois) {
        const GstStructure* detection = gst_video_region_of_interest_meta_get_param(roi, "detection");
        gboolean is_fresh = TRUE, predicted = FALSE;
        gst_structure_get_boolean(detection, "fresh", &is_fresh);
        gst_structure_get_boolean(detection, "predicted", &predicted);
        EXPECT_TRUE(is_fresh || predicted) << "min-hits " << min_hits << ", frame " << i
                                           << ": a carried ROI passed on unpredicted";
        EXPECT_LE(roi->x + roi->w, 640u) << "frame " << i;
        EXPECT_GE(roi->w, 1u) << "frame " << i;
        if (const auto id = roi_track_id(roi, "object_id")) ids.insert(*id);
      }
      gst_buffer_unref(out);
    }
    EXPECT_GT(removed, 0) << "min-hits " << min_hits << ": the face left between two detections";
    EXPECT_EQ(ids.size(), 1u) << "min-hits " << min_hits << ": one face, one id";
    gst_harness_teardown(h);
    h = nullptr;
  }
}

TEST(BoxTrackerTest, OnAFrameMixingFreshAndStaleBoxesTheFreshAreMeasuredTheStalePredicted) {
  using taconite::vision::Box;
  using taconite::vision::BoxTracker;
  using taconite::vision::Detection;
  BoxTracker tracker;
  const taconite::vision::TrackerPolicy policy;
  const Box a{10, 10, 40, 40}, b{200, 10, 40, 40};
  for (int i = 0; i < 3; ++i) tracker.update({Detection{a}, Detection{b}}, policy);
  // One detector saw a (moved), the other carries b.
  const auto results = tracker.update({Detection{{14, 10, 40, 40}}, Detection{b, 0.9, false}}, policy);
  EXPECT_EQ(results[0].id, 1);
  EXPECT_FALSE(results[0].predicted) << "a fresh box is a measurement";
  EXPECT_EQ(results[1].id, 2);
  EXPECT_TRUE(results[1].predicted);
  // Only fresh boxes on the next frame: b's track was held, not missed, so it is still tracked.
  EXPECT_EQ(tracker.update({Detection{{18, 10, 40, 40}}, Detection{b}}, policy)[1].id, 2);
  EXPECT_EQ(tracker.size(), 2u);
}

TEST_F(TaconiteTrackTest, ASteadilyMovingFaceKeepsItsId) {
  start();
  std::set<gint64> seen;
  for (int i = 0; i < 40; ++i) {
    const auto id = push_one(i, {static_cast<guint>(20 + 5 * i), static_cast<guint>(30 + 2 * i), 60, 60});
    if (i < 2) {
      EXPECT_FALSE(id) << "frame " << i << ": not confirmed yet (min-hits=3)";
    } else {
      ASSERT_TRUE(id) << "frame " << i;
      seen.insert(*id);
    }
  }
  EXPECT_EQ(seen, std::set<gint64>{1});
}

class MinHitsTest : public TaconiteTrackTest, public ::testing::WithParamInterface<int> {};

TEST_P(MinHitsTest, TheIdIsPublishedFromTheMinHitsthFrame) {
  const int min_hits = GetParam();
  start({{"min-hits", std::to_string(min_hits)}});
  for (int i = 0; i < min_hits + 3; ++i) {
    const auto id = push_one(i, {100, 80, 50, 50});
    if (i + 1 < min_hits)
      EXPECT_FALSE(id) << "frame " << i << " (matched " << i + 1 << " times)";
    else
      EXPECT_EQ(id, 1) << "frame " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Hits, MinHitsTest, ::testing::Values(1, 2, 3, 6));

TEST_F(TaconiteTrackTest, CrossingFacesKeepTheirIds) {
  // Two faces on nearly the same row move towards each other, overlap fully, and part. Without
  // motion prediction the boxes swap ids at the crossing (each one's last box overlaps the other's
  // new box better); the Kalman prediction keeps them apart.
  start();
  std::set<gint64> left_ids, right_ids;
  for (int i = 0; i < 46; ++i) {
    const Roi left{static_cast<guint>(10 + 6 * i), 100, 40, 40};
    const Roi right{static_cast<guint>(280 - 6 * i), 104, 40, 40};
    const auto ids = push(frame(i, {left, right}));
    ASSERT_EQ(ids.size(), 2u);
    if (i < 2) continue;
    ASSERT_TRUE(ids[0] && ids[1]) << "frame " << i;
    left_ids.insert(*ids[0]);
    right_ids.insert(*ids[1]);
  }
  EXPECT_EQ(left_ids.size(), 1u) << "the left-to-right face changed id";
  EXPECT_EQ(right_ids.size(), 1u) << "the right-to-left face changed id";
  EXPECT_NE(*left_ids.begin(), *right_ids.begin());
}

// A flickering false detection (as a detector gives on a patch of texture) is never confirmed:
// the hits towards min-hits must be consecutive, and an unconfirmed track ends at its first miss.
TEST_F(TaconiteTrackTest, AFlickeringDetectionIsNeverConfirmed) {
  start();  // min-hits=3, max-age=30
  const Roi flicker{150, 100, 40, 40};
  int index = 0;
  for (int round = 0; round < 10; ++round) {
    // Seen in two frames out of three: 20 hits in all, never 3 in a row.
    EXPECT_FALSE(push_one(index++, flicker)) << "frame " << index - 1;
    EXPECT_FALSE(push_one(index++, flicker)) << "frame " << index - 1;
    EXPECT_TRUE(push(frame(index++, {})).empty());
  }
  // A face that stays is confirmed after min-hits frames in a row, with the stream's first id.
  EXPECT_FALSE(push_one(index++, flicker));
  EXPECT_FALSE(push_one(index++, flicker));
  EXPECT_EQ(push_one(index++, flicker), 1);
}

TEST(BoxTrackerTest, HitsMustBeConsecutiveAndUnconfirmedTracksEndAtTheirFirstMiss) {
  using taconite::vision::Box;
  taconite::vision::TrackerPolicy policy;  // min_hits 3, max_age 30
  taconite::vision::BoxTracker tracker;
  const Box box{100, 100, 40, 40};
  EXPECT_EQ(tracker.update_boxes({box}, policy)[0], std::nullopt);
  EXPECT_EQ(tracker.update_boxes({box}, policy)[0], std::nullopt);
  tracker.update_boxes({}, policy);
  EXPECT_EQ(tracker.size(), 0u) << "an unconfirmed track missed once ends";
  for (int i = 0; i < 2; ++i) tracker.update_boxes({box}, policy);
  EXPECT_EQ(tracker.update_boxes({box}, policy)[0], 1) << "three in a row confirm it";
  for (int i = 0; i < 30; ++i) tracker.update_boxes({}, policy);
  EXPECT_EQ(tracker.size(), 1u) << "a confirmed track survives max-age misses";
  EXPECT_EQ(tracker.update_boxes({box}, policy)[0], 1);
}

class MaxAgeTest : public TaconiteTrackTest, public ::testing::WithParamInterface<int> {};

TEST_P(MaxAgeTest, AFaceBackWithinMaxAgeGetsItsIdBackLaterANewOne) {
  const int max_age = GetParam();
  start({{"max-age", std::to_string(max_age)}});
  int index = 0;
  auto gap = [&](int frames) {
    for (int i = 0; i < frames; ++i) EXPECT_TRUE(push(frame(index++, {})).empty());
  };
  const Roi face{120, 90, 60, 60};
  for (int i = 0; i < 3; ++i) push_one(index++, face);
  ASSERT_EQ(push_one(index++, face), 1);
  gap(max_age);
  EXPECT_EQ(push_one(index++, face), 1) << "missing from " << max_age << " frames: the same id at once";
  gap(max_age + 1);
  EXPECT_FALSE(push_one(index++, face)) << "missing from " << max_age + 1 << " frames: a new, unconfirmed track";
  push_one(index++, face);
  EXPECT_EQ(push_one(index++, face), 2) << "a new id, never the old one";
}

INSTANTIATE_TEST_SUITE_P(Ages, MaxAgeTest, ::testing::Values(0, 1, 5, 30));

TEST_F(TaconiteTrackTest, IdsAreNeverReusedWithinAStream) {
  // Faces come and go at a few places (lost tracks end after max-age=2); a flush in between.
  start({{"max-age", "2"}, {"min-hits", "1"}});
  const std::vector<Roi> places{{10, 10, 50, 50}, {200, 20, 60, 60}, {100, 150, 40, 40}};
  std::set<gint64> ended;
  std::vector<gint64> order;
  int index = 0;
  for (int round = 0; round < 12; ++round) {
    if (round == 6) flush();
    const Roi& place = places[static_cast<std::size_t>(round) % places.size()];
    std::optional<gint64> id;
    for (int i = 0; i < 3; ++i) {
      const auto now = push_one(index++, place);
      ASSERT_TRUE(now);
      if (id) {
        EXPECT_EQ(now, id) << "round " << round;
      }
      id = now;
    }
    EXPECT_FALSE(ended.count(*id)) << "id " << *id << " reused in round " << round;
    ended.insert(*id);
    order.push_back(*id);
    for (int i = 0; i < 3; ++i) push(frame(index++, {}));  // longer than max-age
  }
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
  EXPECT_EQ(order.back(), 12) << "one id per appearance, counting on across the flush";
}

TEST_F(TaconiteTrackTest, FlushStopForgetsTheTracksAndIdsCountOn) {
  start();
  const Roi face{100, 80, 50, 50};
  for (int i = 0; i < 4; ++i) push_one(i, face);
  ASSERT_EQ(push_one(4, face), 1);
  flush();
  EXPECT_FALSE(push_one(5, face)) << "the track was forgotten: unconfirmed again";
  EXPECT_FALSE(push_one(6, face));
  EXPECT_EQ(push_one(7, face), 2) << "the same stream: id 1 is not given again";
}

TEST_F(TaconiteTrackTest, StreamStartBeginsANewStreamWithIdsFromOne) {
  start();
  const Roi face{100, 80, 50, 50};
  for (int i = 0; i < 4; ++i) push_one(i, face);
  ASSERT_EQ(push_one(4, face), 1);
  for (int i = 0; i < 4; ++i) push_one(5 + i, {10, 10, 30, 30});  // a second face: id 2
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_stream_start("second-stream")));
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_segment(&segment)));
  EXPECT_FALSE(push_one(10, face)) << "the tracks were forgotten";
  EXPECT_FALSE(push_one(11, face));
  EXPECT_EQ(push_one(12, face), 1) << "a new stream numbers its tracks from 1";
}

TEST_F(TaconiteTrackTest, AFrameSizeChangeForgetsTheTracksOtherCapsChangesDoNot) {
  start();
  const Roi face{100, 80, 50, 50};
  for (int i = 0; i < 3; ++i) push_one(i, face);
  ASSERT_EQ(push_one(3, face), 1);
  gst_harness_set_src_caps_str(h, "video/x-raw,format=RGB,width=320,height=240,framerate=15/1");
  EXPECT_EQ(push_one(4, face), 1) << "same frame size: the track goes on";
  gst_harness_set_src_caps_str(h, "video/x-raw,format=RGB,width=640,height=480,framerate=15/1");
  auto push_big = [&](int index) {
    const auto ids = push(frame(index, {face}, 640, 480));
    return ids.size() == 1 ? ids[0] : std::nullopt;
  };
  EXPECT_FALSE(push_big(5)) << "boxes of another frame size start new tracks";
  EXPECT_FALSE(push_big(6));
  EXPECT_EQ(push_big(7), 2);
}

TEST_F(TaconiteTrackTest, ManyRoisAreCappedAtMaxRoisTheLargestTracked) {
  // 500 ROIs on a grid, none overlapping: the 256 larger ones (the last in meta order) get ids,
  // every ROI passes on, and a frame of 500 overlapping ROIs is handled too.
  start({{"min-hits", "1"}});
  std::vector<Roi> rois;
  for (guint i = 0; i < 500; ++i) {
    const guint size = i >= 244 ? 9 : 8;
    rois.push_back({(i % 25) * 12, (i / 25) * 12, size, size});
  }
  for (int f = 0; f < 3; ++f) {
    const auto ids = push(frame(f, rois));
    ASSERT_EQ(ids.size(), 500u) << "frame " << f;
    std::set<gint64> distinct;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      EXPECT_EQ(ids[i].has_value(), i >= 244) << "ROI " << i << " of frame " << f;
      if (ids[i]) distinct.insert(*ids[i]);
    }
    EXPECT_EQ(distinct.size(), 256u) << "frame " << f;
    EXPECT_EQ(*distinct.rbegin(), 256) << "the same 256 tracks from frame to frame";
  }
  std::vector<Roi> piled;
  for (guint i = 0; i < 500; ++i) piled.push_back({100 + i % 7, 80 + i % 5, 40 + i % 11, 40 + i % 3});
  for (int f = 3; f < 6; ++f) EXPECT_EQ(push(frame(f, piled)).size(), 500u);
  guint max_rois = 0;
  g_object_get(h->element, "max-rois", &max_rois, nullptr);
  EXPECT_EQ(max_rois, 256u);
}

TEST_F(TaconiteTrackTest, RoisOutsideTheFrameGetNoIdPartlyOutsideAreClipped) {
  start({{"min-hits", "1"}});
  const std::vector<Roi> rois{
      {1000, 50, 40, 40},                            // right of the frame
      {50, 50, 0, 40},                               // no width
      {G_MAXUINT, G_MAXUINT, G_MAXUINT, G_MAXUINT},  // x + w overflows 32 bits
      {300, 200, 100, 100},                          // partly outside: clipped to 20x40
      {0, 0, G_MAXUINT, G_MAXUINT},                  // the whole frame and far beyond
  };
  for (int f = 0; f < 3; ++f) {
    const auto ids = push(frame(f, rois));
    ASSERT_EQ(ids.size(), rois.size());
    EXPECT_FALSE(ids[0]);
    EXPECT_FALSE(ids[1]);
    EXPECT_FALSE(ids[2]);
    EXPECT_EQ(ids[3], 1) << "frame " << f;
    EXPECT_EQ(ids[4], 2) << "frame " << f;
  }
}

TEST_F(TaconiteTrackTest, OnlyRoisOfRoiTypeAreTrackedEmptyMeansEvery) {
  start({{"min-hits", "1"}});
  const std::vector<Roi> rois{{10, 10, 40, 40, "face"}, {100, 10, 80, 200, "person"}};
  auto ids = push(frame(0, rois));
  EXPECT_EQ(ids, (std::vector<std::optional<gint64>>{1, std::nullopt}));
  g_object_set(h->element, "roi-type", "", nullptr);
  ids = push(frame(1, rois));
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 2);
}

TEST_F(TaconiteTrackTest, AnObjectIdFromUpstreamIsReplacedOrRemoved) {
  start({{"min-hits", "2"}});
  auto with_upstream_id = [](int index) {
    GstBuffer* buffer = frame(index, {{100, 80, 50, 50}});
    gst_video_region_of_interest_meta_add_param(rois_of(buffer)[0],
                                                gst_structure_new("object_id", "id", G_TYPE_INT, 77, nullptr));
    return buffer;
  };
  EXPECT_EQ(push(with_upstream_id(0)), (std::vector<std::optional<gint64>>{std::nullopt}))
      << "an unconfirmed track: the stale id is removed";
  EXPECT_EQ(push(with_upstream_id(1)), (std::vector<std::optional<gint64>>{1}));
  GstBuffer* out = gst_harness_push_and_pull(h, with_upstream_id(2));
  ASSERT_NE(out, nullptr);
  int params = 0;
  for (GList* l = rois_of(out)[0]->params; l; l = l->next)
    params += gst_structure_has_name(static_cast<GstStructure*>(l->data), "object_id");
  EXPECT_EQ(params, 1) << "replaced, not added twice";
  gst_buffer_unref(out);
}

TEST_F(TaconiteTrackTest, BuffersAreWrittenInPlaceAndCopiedOnlyWhenTheyMustBe) {
  start({{"min-hits", "1"}});
  // Writable with an id to write: the same buffer comes out.
  GstBuffer* in = frame(0, {{100, 80, 50, 50}});
  GstBuffer* expected = in;
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  EXPECT_EQ(out, expected);
  gst_buffer_unref(out);

  // Not writable, nothing to write: passed on as is.
  in = frame(1, {});
  gst_buffer_ref(in);
  out = gst_harness_push_and_pull(h, in);
  EXPECT_EQ(out, in);
  gst_buffer_unref(out);
  gst_buffer_unref(in);

  // Not writable with an id to write: a metadata copy sharing the pixels; the input is untouched.
  in = frame(2, {{100, 80, 50, 50}});
  gst_buffer_ref(in);
  out = gst_harness_push_and_pull(h, in);
  ASSERT_NE(out, nullptr);
  EXPECT_NE(out, in);
  EXPECT_EQ(gst_buffer_peek_memory(out, 0), gst_buffer_peek_memory(in, 0)) << "no pixel copy";
  EXPECT_EQ(ids_of(out), (std::vector<std::optional<gint64>>{1}));
  EXPECT_EQ(ids_of(in), (std::vector<std::optional<gint64>>{std::nullopt}));
  gst_buffer_unref(out);
  gst_buffer_unref(in);
}

// A picture of a scene chosen by `seed`, `pan` pixels to the right: smooth shading and one bright
// block, as a camera would see (the scene-cut detector reads the pixels).
GstBuffer* scene_frame(int index, int seed, int pan, const std::vector<Roi>& rois) {
  GstBuffer* buffer = rgb_buffer(320, 240, [&](int x, int y) {
    const double wx = x + pan, s = seed;
    double v = 60 + 40 * s + 40 * std::sin(wx / (23 + 7 * s) + s) * std::cos(y / (31 - 5 * s) + 2 * s);
    if (wx > 60 + 90 * s && wx < 160 + 90 * s && y > 40 + 50 * s && y < 120 + 50 * s) v = 250 - 100 * s;
    const auto g = static_cast<std::uint8_t>(std::clamp(v, 0.0, 255.0));
    return std::array<std::uint8_t, 3>{g, static_cast<std::uint8_t>(g / 2 + 40), static_cast<std::uint8_t>(255 - g)};
  });
  GST_BUFFER_PTS(buffer) = index * kFrame;
  GST_BUFFER_DURATION(buffer) = kFrame;
  for (const Roi& r : rois) gst_buffer_add_video_region_of_interest_meta(buffer, r.type, r.x, r.y, r.w, r.h);
  return buffer;
}

// Edited video: a face tracked through a pan of 8 px a frame, then a hard cut to another shot
// with a face at the same place (the tracker would otherwise carry the id across).
class SceneCutTrackTest : public TaconiteTrackTest {
 protected:
  std::vector<std::optional<gint64>> ids_across_a_cut() {
    std::vector<std::optional<gint64>> ids;
    for (int i = 0; i < 20; ++i) {
      const auto got = push(scene_frame(i, i < 10 ? 0 : 1, 8 * i, {{100u + i, 80, 60, 60}}));
      ids.push_back(got.size() == 1 ? got[0] : std::nullopt);
    }
    return ids;
  }
};

TEST_F(SceneCutTrackTest, AHardSceneCutEndsEveryTrackAPanDoesNot) {
  start({{"min-hits", "1"}});
  const auto ids = ids_across_a_cut();
  ASSERT_TRUE(ids[0] && ids[10]);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(ids[i], ids[0]) << "frame " << i << ": the pan keeps the id";
  for (int i = 10; i < 20; ++i) EXPECT_EQ(ids[i], ids[10]) << "frame " << i;
  EXPECT_GT(*ids[10], *ids[0]) << "the face after the cut gets a new id, never a reused one";
}

TEST_F(SceneCutTrackTest, SceneCutThresholdZeroCarriesTracksAcrossCuts) {
  start({{"min-hits", "1"}, {"scene-cut-threshold", "0"}});
  const auto ids = ids_across_a_cut();
  ASSERT_TRUE(ids[0]);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(ids[i], ids[0]) << "frame " << i;
}

TEST_F(TaconiteTrackTest, AFrameThatCannotBeReadIsTrackedWithOneWarning) {
  start({{"min-hits", "1"}});
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(h->element, bus);
  std::optional<gint64> first;
  for (int i = 0; i < 4; ++i) {
    GstBuffer* in = scene_frame(i, 0, 0, {{100, 80, 60, 60}});
    // A GstVideoMeta whose stride is below a row of pixels (a hostile or broken upstream).
    gsize offsets[GST_VIDEO_MAX_PLANES] = {};
    gint strides[GST_VIDEO_MAX_PLANES] = {100};
    gst_buffer_add_video_meta_full(in, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_RGB, 320, 240, 1, offsets, strides);
    const auto ids = push(in);
    ASSERT_EQ(ids.size(), 1u);
    ASSERT_TRUE(ids[0]) << "frame " << i << ": its ROI is tracked all the same";
    if (!first) first = ids[0];
    EXPECT_EQ(ids[0], first);
  }
  int warnings = 0;
  while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING)) {
    GError* error = nullptr;
    gchar* debug = nullptr;
    gst_message_parse_warning(m, &error, &debug);
    EXPECT_NE(std::string(debug).find("stride 100"), std::string::npos) << debug;
    g_clear_error(&error);
    g_free(debug);
    gst_message_unref(m);
    ++warnings;
  }
  EXPECT_EQ(warnings, 1) << "one warning per stream";
  gst_element_set_bus(h->element, nullptr);
  gst_object_unref(bus);
}

TEST_F(TaconiteTrackTest, AllocationQueriesReachDownstream) {
  // In place: upstream may allocate buffers with downstream's GstVideoMeta support (strides).
  start();
  gst_harness_add_propose_allocation_meta(h, GST_VIDEO_META_API_TYPE, nullptr);
  GstCaps* caps = gst_caps_from_string(kCaps);
  GstQuery* query = gst_query_new_allocation(caps, TRUE);
  gst_caps_unref(caps);
  ASSERT_TRUE(gst_pad_peer_query(h->srcpad, query));
  EXPECT_TRUE(gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr));
  gst_query_unref(query);
}

TEST(RoiTrackParamTest, WrittenIdsReadBackAsTaconiteadafaceReadsThemBeyondG_MAXINTToo) {
  GstBuffer* buffer = frame(0, {{10, 10, 20, 20}});
  GstVideoRegionOfInterestMeta* roi = rois_of(buffer)[0];
  for (gint64 id : {gint64{1}, gint64{G_MAXINT}, gint64{G_MAXINT} + 1, gint64{INT64_MAX} - 1}) {
    EXPECT_TRUE(taconite::gst::set_roi_track_id(roi, id));
    EXPECT_EQ(roi_track_id(roi, "object_id"), id);
  }
  EXPECT_EQ(g_list_length(roi->params), 1u);
  gint small = 0;
  taconite::gst::set_roi_track_id(roi, 5);
  EXPECT_TRUE(gst_structure_get_int(static_cast<GstStructure*>(roi->params->data), "id", &small))
      << "a G_TYPE_INT field, as DL Streamer writes it";
  EXPECT_EQ(small, 5);
  EXPECT_TRUE(taconite::gst::set_roi_track_id(roi, std::nullopt));
  EXPECT_FALSE(roi_track_id(roi, "object_id"));
  EXPECT_FALSE(taconite::gst::set_roi_track_id(roi, std::nullopt)) << "nothing left to remove";
  gst_buffer_unref(buffer);
}

TEST(BoxTrackerTest, IdsCountPastG_MAXINTAndStopBeforeWrapping) {
  using taconite::vision::Box;
  taconite::vision::TrackerPolicy policy;
  policy.min_hits = 1;
  taconite::vision::BoxTracker tracker(G_MAXINT);
  auto ids = tracker.update_boxes({{0, 0, 10, 10}, {50, 50, 10, 10}}, policy);
  EXPECT_EQ(ids, (std::vector<std::optional<std::int64_t>>{G_MAXINT, gint64{G_MAXINT} + 1}));

  tracker.restart(INT64_MAX - 1);
  ids = tracker.update_boxes({{0, 0, 10, 10}, {50, 50, 10, 10}}, policy);
  EXPECT_EQ(ids, (std::vector<std::optional<std::int64_t>>{INT64_MAX - 1, std::nullopt}))
      << "the last id is given, then none: never a wrapped, reused one";
  EXPECT_TRUE(tracker.ids_exhausted());
}

// taconitetrack ! taconiteadaface reinfer-interval=5: ROIs without ids upstream get tracked ids, and
// the embedder reuses a track's embedding between re-inferences.
TEST(TaconiteTrackPipelineTest, TaconiteadafaceReusesEmbeddingsPerTrackedId) {
  std::shared_ptr<FakeEngineState> engine = install_fake_engine();
  GstHarness* h = gst_harness_new_parse(
      "taconitetrack ! taconiteadaface name=embed bundle=fake input-mode=rois reinfer-interval=5");
  gst_harness_set_src_caps_str(h, "video/x-raw,format=RGB,width=160,height=120,framerate=30/1");
  const int frames = 20;
  for (int i = 0; i < frames; ++i) {
    GstBuffer* in = rgb_buffer(160, 120, [&](int x, int y) {
      return std::array<std::uint8_t, 3>{120, static_cast<std::uint8_t>(x + i), static_cast<std::uint8_t>(y)};
    });
    GST_BUFFER_PTS(in) = i * kFrame;
    gst_buffer_add_video_region_of_interest_meta(in, "face", static_cast<guint>(30 + i), 30, 50, 50);
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(ids_of(out), (std::vector<std::optional<gint64>>{i < 2 ? std::nullopt : std::optional<gint64>(1)}));
    EXPECT_EQ(embedding_metas(out).size(), 1u);
    gst_buffer_unref(out);
  }
  GstElement* embed = gst_bin_get_by_name(GST_BIN(h->element), "embed");
  ASSERT_NE(embed, nullptr);
  // Frames 0-1 untracked (computed); from frame 2 track 1 is computed every 5th frame (2, 7, 12, 17).
  EXPECT_EQ(counter(embed, "faces-embedded"), 6u);
  EXPECT_EQ(counter(embed, "faces-cached"), 14u);
  EXPECT_EQ(engine->faces_seen(), 6u);
  gst_object_unref(embed);
  gst_harness_teardown(h);
  uninstall_fake_engine();
}

}  // namespace

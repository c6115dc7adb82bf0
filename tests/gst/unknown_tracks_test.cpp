// keep-unknowns' per-track bookkeeping (gst/identify/unknown_tracks.hpp) without GStreamer: which
// tracks give a face when they end, and which face.
#include <gtest/gtest.h>

#include <vector>

#include "unknown_tracks.hpp"

namespace {

using taconite::gst::EndedUnknown;
using taconite::gst::FaceCandidate;
using taconite::gst::TrackVerdict;
using taconite::gst::UnknownTracks;

const std::vector<float> kFace = {0.6f, 0.8f};

FaceCandidate candidate(double quality, const char* nearest = "bob") {
  FaceCandidate c;
  c.quality = quality;
  c.embedding = kFace;
  c.norm = 12.0;
  c.nearest_identity = 2;
  c.nearest_name = nearest;
  c.nearest_similarity = 0.31;
  return c;
}

TEST(UnknownTracksTest, TrackEndingUnknownGivesItsBestFaceAndSpan) {
  UnknownTracks tracks;
  FaceCandidate low = candidate(0.2, "carol"), high = candidate(0.9), mid = candidate(0.5, "dave");
  EXPECT_TRUE(tracks.seen(7, 0, 1000, TrackVerdict::Pending, &low));
  EXPECT_TRUE(tracks.seen(7, 1, 1100, TrackVerdict::Unknown, &high));
  EXPECT_FALSE(tracks.seen(7, 2, 1200, TrackVerdict::Unknown, &mid));  // not better
  EXPECT_FALSE(tracks.seen(7, 3, 1300, TrackVerdict::Unknown, nullptr));
  EXPECT_TRUE(tracks.end_stale(5, 2).empty());  // seen at 3: not stale at 5 with timeout 2
  const std::vector<EndedUnknown> ended = tracks.end_stale(6, 2);
  ASSERT_EQ(ended.size(), 1u);
  const auto& f = ended[0].face;
  EXPECT_EQ(f.track_id, 7);
  EXPECT_EQ(f.first_seen_ms, 1000);
  EXPECT_EQ(f.last_seen_ms, 1300);
  EXPECT_EQ(f.quality, 0.9);
  EXPECT_EQ(f.nearest_name, "bob");
  EXPECT_EQ(f.embedding, kFace);
  EXPECT_EQ(f.norm, 12.0);
  EXPECT_EQ(tracks.size(), 0u);
}

TEST(UnknownTracksTest, ATrackTheTrackerOwnsEndsOnItsEndNotOnTheTimeout) {
  UnknownTracks tracks;
  FaceCandidate c = candidate(0.7);
  tracks.seen(4, 0, 1000, TrackVerdict::Unknown, &c);
  tracks.keep_until_ended(4);
  tracks.seen(5, 0, 1000, TrackVerdict::Unknown, &c);  // no tracker uid: the fallback timeout
  const std::vector<EndedUnknown> stale = tracks.end_stale(1000, 150);
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_EQ(stale[0].face.track_id, 5);
  EXPECT_EQ(tracks.size(), 1u) << "track 4 waits for its tracker";
  const std::int64_t ended_ids[] = {9, 4};  // 9: not one of ours, ignored
  const std::vector<EndedUnknown> ended = tracks.end_tracks(ended_ids);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].face.track_id, 4);
  EXPECT_EQ(ended[0].face.quality, 0.7);
  EXPECT_EQ(tracks.size(), 0u);
}

TEST(UnknownTracksTest, KnownAndPendingTracksGiveNothing) {
  UnknownTracks tracks;
  FaceCandidate c = candidate(0.5);
  tracks.seen(1, 0, 0, TrackVerdict::Known, &c);
  tracks.seen(2, 0, 0, TrackVerdict::Pending, &c);
  tracks.seen(3, 0, 0, TrackVerdict::Unknown, &c);
  tracks.seen(3, 1, 0, TrackVerdict::Known, &c);  // decided again, on a gallery identity
  EXPECT_TRUE(tracks.end_all().empty());
}

TEST(UnknownTracksTest, TooManyTracksEndTheLongestUnseen) {
  UnknownTracks tracks(2);
  FaceCandidate c = candidate(0.5);
  tracks.seen(1, 0, 0, TrackVerdict::Unknown, &c);
  tracks.seen(2, 1, 0, TrackVerdict::Unknown, &c);
  tracks.seen(3, 2, 0, TrackVerdict::Unknown, &c);  // track 1 is pushed out
  EXPECT_EQ(tracks.size(), 2u);
  const std::vector<EndedUnknown> ended = tracks.end_stale(2, 100);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].face.track_id, 1);
  EXPECT_EQ(tracks.end_all().size(), 2u);
}

}  // namespace

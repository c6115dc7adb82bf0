// Track reuse with the recording fake engine: ROIs with a tracking id are re-embedded every
// reinfer-interval frames or when their box grows; cached embeddings in between carry their age;
// track-best keeps the highest-norm one; a track survives a gap of track-timeout frames, not one
// more, unless taconitetrack owns it (a uid beside the id): then only its tracks-ended event ends
// it; an id two ROIs of one frame share tracks neither.
#include <cmath>

#include "gst_test_support.hpp"

namespace {

using namespace gsttest;

const char* kCaps = "video/x-raw,format=RGB,width=160,height=120,framerate=30/1";

struct Face {
  int id;  // < 0: no tracking id
  int x, y, size;
  const char* id_param = "object_id";
  const char* uid = nullptr;  // taconitetrack's, beside an object_id id: the tracker owns the track
};

// A frame of uniform `shade` (brighter = larger fake norm) with the given face ROIs.
GstBuffer* frame(int index, const std::vector<Face>& faces, std::uint8_t shade = 120) {
  GstBuffer* buffer = rgb_buffer(160, 120, [&](int x, int y) {
    return std::array<std::uint8_t, 3>{shade, static_cast<std::uint8_t>(x + index), static_cast<std::uint8_t>(y)};
  });
  GST_BUFFER_PTS(buffer) = index * (GST_SECOND / 30);
  for (const Face& f : faces) {
    GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(
        buffer, "face", static_cast<guint>(f.x), static_cast<guint>(f.y), static_cast<guint>(f.size),
        static_cast<guint>(f.size));
    if (f.id >= 0) {
      if (std::string(f.id_param) == "object_id")
        gst_video_region_of_interest_meta_add_param(
            roi, f.uid ? gst_structure_new("object_id", "id", G_TYPE_INT, f.id, "uid", G_TYPE_STRING, f.uid, nullptr)
                       : gst_structure_new("object_id", "id", G_TYPE_INT, f.id, nullptr));
      else
        gst_video_region_of_interest_meta_add_param(
            roi, gst_structure_new("tracking", f.id_param, G_TYPE_UINT, static_cast<guint>(f.id), nullptr));
    }
  }
  return buffer;
}

struct Seen {
  GstTaconiteEmbeddingStatus status;
  guint age;
  std::vector<float> embedding;
  double norm;
};

class TrackTest : public ::testing::Test {
 protected:
  void SetUp() override { engine = install_fake_engine(); }
  void TearDown() override {
    if (h) gst_harness_teardown(h);
    uninstall_fake_engine();
  }
  void start(std::vector<std::pair<std::string, std::string>> props) {
    props.insert(props.begin(), {{"bundle", "fake"}, {"input-mode", "rois"}});
    h = adaface_harness(props);
    gst_harness_set_src_caps_str(h, kCaps);
  }
  // Pushes a frame and returns what each face got, in ROI order.
  std::vector<Seen> push(GstBuffer* in) {
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    std::vector<Seen> seen;
    EXPECT_NE(out, nullptr);
    if (!out) return seen;
    for (GstTaconiteEmbeddingMeta* m : embedding_metas(out))
      seen.push_back({m->status, m->cache_age, std::vector<float>(m->embedding, m->embedding + m->dim), m->norm});
    gst_buffer_unref(out);
    return seen;
  }
  guint64 counter(const char* name) {
    guint64 v = 0;
    g_object_get(h->element, name, &v, nullptr);
    return v;
  }
  std::shared_ptr<FakeEngineState> engine;
  GstHarness* h = nullptr;
};

TEST_F(TrackTest, ReusesTheCachedEmbeddingUntilTheReinferInterval) {
  start({{"reinfer-interval", "3"}});
  std::vector<std::vector<float>> computed;
  for (int i = 0; i < 7; ++i) {
    const auto seen = push(frame(i, {{7, 40, 30, 50}}));
    ASSERT_EQ(seen.size(), 1u);
    if (i % 3 == 0) {
      EXPECT_EQ(seen[0].status, GST_TACONITE_EMBEDDING_COMPUTED) << "frame " << i;
      EXPECT_EQ(seen[0].age, 0u);
      computed.push_back(seen[0].embedding);
    } else {
      EXPECT_EQ(seen[0].status, GST_TACONITE_EMBEDDING_CACHED) << "frame " << i;
      EXPECT_EQ(seen[0].age, static_cast<guint>(i % 3)) << "frames since it was computed";
      EXPECT_EQ(seen[0].embedding, computed.back()) << "the cached embedding is the last computed one";
    }
  }
  EXPECT_EQ(engine->faces_seen(), 3u);
  EXPECT_EQ(counter("faces-cached"), 4u);
  EXPECT_EQ(counter("faces-embedded"), 3u);
  EXPECT_NE(computed[0], computed[1]) << "the frames differ, so re-embedding gives a new vector";
}

TEST_F(TrackTest, AGrowingBoxIsReembeddedEarly) {
  start({{"reinfer-interval", "10"}, {"reinfer-growth", "0.2"}});
  EXPECT_EQ(push(frame(0, {{7, 40, 30, 40}}))[0].status, GST_TACONITE_EMBEDDING_COMPUTED);
  EXPECT_EQ(push(frame(1, {{7, 40, 30, 43}}))[0].status, GST_TACONITE_EMBEDDING_CACHED) << "area +16 %";
  EXPECT_EQ(push(frame(2, {{7, 40, 30, 48}}))[0].status, GST_TACONITE_EMBEDDING_COMPUTED) << "area +44 %";
  EXPECT_EQ(push(frame(3, {{7, 40, 30, 40}}))[0].status, GST_TACONITE_EMBEDDING_CACHED) << "shrinking never forces";
  EXPECT_EQ(engine->faces_seen(), 2u);
}

TEST_F(TrackTest, TracksAreIndependentAndUntrackedFacesAlwaysComputed) {
  start({{"reinfer-interval", "5"}});
  auto seen = push(frame(0, {{1, 10, 10, 30}, {2, 80, 10, 30}, {-1, 40, 60, 30}}));
  ASSERT_EQ(seen.size(), 3u);
  for (const Seen& s : seen) EXPECT_EQ(s.status, GST_TACONITE_EMBEDDING_COMPUTED);
  seen = push(frame(1, {{1, 10, 10, 30}, {3, 80, 10, 30}, {-1, 40, 60, 30}}));
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].status, GST_TACONITE_EMBEDDING_CACHED) << "track 1 is known";
  EXPECT_EQ(seen[1].status, GST_TACONITE_EMBEDDING_COMPUTED) << "track 3 is new";
  EXPECT_EQ(seen[2].status, GST_TACONITE_EMBEDDING_COMPUTED) << "no tracking id";
  std::lock_guard<std::mutex> guard(engine->lock);
  EXPECT_EQ(engine->batch_sizes, (std::vector<std::size_t>{3, 2})) << "only the faces to compute reach the engine";
}

TEST_F(TrackTest, TrackBestKeepsTheHighestNormEmbedding) {
  start({{"reinfer-interval", "2"}, {"track-best", "true"}});
  const auto bright = push(frame(0, {{7, 40, 30, 50}}, 250));
  const auto cached = push(frame(1, {{7, 40, 30, 50}}, 10));
  const auto dark = push(frame(2, {{7, 40, 30, 50}}, 10));
  const auto later = push(frame(3, {{7, 40, 30, 50}}, 10));
  ASSERT_EQ(later.size(), 1u);
  ASSERT_EQ(dark[0].status, GST_TACONITE_EMBEDDING_COMPUTED);
  ASSERT_LT(dark[0].norm, bright[0].norm) << "the fake engine's norm follows brightness";
  EXPECT_EQ(cached[0].status, GST_TACONITE_EMBEDDING_CACHED);
  EXPECT_EQ(later[0].status, GST_TACONITE_EMBEDDING_CACHED);
  EXPECT_EQ(later[0].embedding, bright[0].embedding) << "the best (frame 0) is kept, not the latest (frame 2)";
  EXPECT_EQ(later[0].age, 3u) << "age counts from when the kept embedding was computed";
}

// track-timeout=N: a track missing from N consecutive frames is kept, from N+1 forgotten.
class TrackTimeoutTest : public TrackTest, public ::testing::WithParamInterface<int> {};

TEST_P(TrackTimeoutTest, ATrackSurvivesAGapOfTrackTimeoutFramesButNotOneMore) {
  const int timeout = GetParam();
  start({{"reinfer-interval", "1000"}, {"track-timeout", std::to_string(timeout)}});
  int index = 0;
  auto push_gap = [&](int frames) {
    for (int i = 0; i < frames; ++i) push(frame(index++, {}));
  };
  EXPECT_EQ(push(frame(index++, {{7, 40, 30, 50}}))[0].status, GST_TACONITE_EMBEDDING_COMPUTED);
  push_gap(timeout);
  EXPECT_EQ(push(frame(index++, {{7, 40, 30, 50}}))[0].status, GST_TACONITE_EMBEDDING_CACHED)
      << "missing from " << timeout << " frames: kept";
  push_gap(timeout + 1);
  EXPECT_EQ(push(frame(index++, {{7, 40, 30, 50}}))[0].status, GST_TACONITE_EMBEDDING_COMPUTED)
      << "missing from " << timeout + 1 << " frames: forgotten";
}

INSTANTIATE_TEST_SUITE_P(Timeouts, TrackTimeoutTest, ::testing::Values(0, 1, 2, 5));

// The ids tracks-ended events named that went on downstream since the last call.
std::vector<gint64> forwarded_ends(GstHarness* h) {
  std::vector<gint64> ids;
  for (const EndedEvent& e : ended_events(h))
    for (const auto& track : e.tracks) ids.push_back(track.first);
  return ids;
}

// A track carrying taconitetrack's uid outlives track-timeout and another track's end, and its
// cached embedding goes with the tracks-ended event naming it: the id seen after the event is
// embedded afresh. Each event is passed on downstream, in order before the next frame.
TEST_F(TrackTest, ATrackersTrackIsForgottenOnItsEndedEventNotOnTheTimeout) {
  start({{"reinfer-interval", "1000"}, {"track-timeout", "2"}});
  const Face owned{7, 40, 30, 50, "object_id", "8a3c54e6-2f0b-4c8e-9d1a-3b6f0e2d7c41"};
  int index = 0;
  EXPECT_EQ(push(frame(index++, {owned}))[0].status, GST_TACONITE_EMBEDDING_COMPUTED);
  ended_events(h);  // stream-start, caps, segment
  for (int i = 0; i < 3; ++i) push(frame(index++, {}));
  EXPECT_EQ(push(frame(index++, {owned}))[0].status, GST_TACONITE_EMBEDDING_CACHED)
      << "missing from 3 frames, more than track-timeout: still the tracker's track";

  ASSERT_TRUE(gst_harness_push_event(h, tracks_ended_event(9, "5d0e1f2a-7b3c-4d9e-8f10-2a3b4c5d6e7f")));
  EXPECT_EQ(push(frame(index++, {owned}))[0].status, GST_TACONITE_EMBEDDING_CACHED) << "track 9 ended, not 7";
  EXPECT_EQ(forwarded_ends(h), std::vector<gint64>{9});

  ASSERT_TRUE(gst_harness_push_event(h, tracks_ended_event(7, owned.uid)));
  const Face again{7, 40, 30, 50, "object_id", "c41e7a90-1d2b-4f3c-a5e6-7f8091a2b3c4"};
  EXPECT_EQ(push(frame(index++, {again}))[0].status, GST_TACONITE_EMBEDDING_COMPUTED)
      << "track 7 ended: its id seen again is a new track";
  EXPECT_EQ(forwarded_ends(h), std::vector<gint64>{7});
  EXPECT_EQ(push(frame(index++, {again}))[0].status, GST_TACONITE_EMBEDDING_CACHED);
  EXPECT_EQ(engine->faces_seen(), 2u);
}

// The event's ids are taconitetrack's object_id ids: with another track-id-param they name other
// tracks, so the event ends none of them (and is still passed on).
TEST_F(TrackTest, WithAnotherTrackIdParamTheEndedEventEndsNothing) {
  start({{"reinfer-interval", "1000"}, {"track-id-param", "track"}});
  const Face face{9, 40, 30, 50, "track"};
  EXPECT_EQ(push(frame(0, {face}))[0].status, GST_TACONITE_EMBEDDING_COMPUTED);
  ended_events(h);
  ASSERT_TRUE(gst_harness_push_event(h, tracks_ended_event(9, "5d0e1f2a-7b3c-4d9e-8f10-2a3b4c5d6e7f")));
  EXPECT_EQ(push(frame(1, {face}))[0].status, GST_TACONITE_EMBEDDING_CACHED);
  EXPECT_EQ(forwarded_ends(h), std::vector<gint64>{9});
}

TEST_F(TrackTest, TwoRoisWithOneTrackIdNeverGetEachOthersEmbedding) {
  start({{"reinfer-interval", "10"}});
  // Different places of the frame, so different pixels and different fake embeddings.
  for (int i = 0; i < 3; ++i) {
    const auto seen = push(frame(i, {{7, 10, 10, 40}, {7, 100, 60, 40}}));
    ASSERT_EQ(seen.size(), 2u);
    for (const Seen& s : seen) EXPECT_EQ(s.status, GST_TACONITE_EMBEDDING_COMPUTED) << "frame " << i;
    EXPECT_NE(seen[0].embedding, seen[1].embedding) << "frame " << i;
  }
  // The shared id cached nothing: once one ROI carries it alone, it is tracked from there.
  EXPECT_EQ(push(frame(3, {{7, 10, 10, 40}}))[0].status, GST_TACONITE_EMBEDDING_COMPUTED);
  EXPECT_EQ(push(frame(4, {{7, 10, 10, 40}}))[0].status, GST_TACONITE_EMBEDDING_CACHED);
}

TEST_F(TrackTest, TheIdParamNameIsConfigurable) {
  start({{"reinfer-interval", "4"}, {"track-id-param", "track"}});
  Face face{9, 40, 30, 50, "track"};
  EXPECT_EQ(push(frame(0, {face}))[0].status, GST_TACONITE_EMBEDDING_COMPUTED);
  EXPECT_EQ(push(frame(1, {face}))[0].status, GST_TACONITE_EMBEDDING_CACHED);
  // The default name does not match "object_id" params any more: always computed.
  EXPECT_EQ(push(frame(2, {{9, 40, 30, 50}}))[0].status, GST_TACONITE_EMBEDDING_COMPUTED);
}

TEST_F(TrackTest, WithoutReuseEveryFaceIsComputed) {
  start({});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(push(frame(i, {{7, 40, 30, 50}}))[0].status, GST_TACONITE_EMBEDDING_COMPUTED);
  EXPECT_EQ(counter("faces-cached"), 0u);
}

TEST_F(TrackTest, AFlushStopWhileAFrameIsInTheEngineForgetsThatFramesTrackToo) {
  // FLUSH_STOP's reset of the track cache runs on the streaming thread before its next item, so
  // a frame still in the engine when the flush ends cannot leave its track in the new stream.
  start({{"reinfer-interval", "10"}});
  engine->close_gate();
  ASSERT_EQ(gst_harness_push(h, frame(0, {{5, 40, 30, 50}})), GST_FLOW_OK);
  engine->wait_for_waiting_calls(1);
  // No FLUSH_START: frame 0 goes on (GStreamer warns it leaves without a segment, which is so).
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_stop(FALSE)));
  engine->open_gate();
  GstBuffer* before = gst_harness_pull(h);
  ASSERT_NE(before, nullptr);
  gst_buffer_unref(before);
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_segment(&segment)));  // the flush removed it
  const std::vector<Seen> after = push(frame(1, {{5, 40, 30, 50}}));
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].status, GST_TACONITE_EMBEDDING_COMPUTED) << "track 5 was cached before the flush";
}

}  // namespace

namespace {

// Frame messages name each face's tracking id (also without reuse), and only a unique one.
TEST_F(TrackTest, FrameMessagesCarryTheTrackIdOfTrackedFaces) {
  start({{"post-messages", "true"}});
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(h->element, bus);
  push(frame(0, {{7, 10, 10, 40}, {-1, 80, 40, 40}, {9, 10, 70, 30}, {9, 110, 70, 30}}));
  GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT);
  ASSERT_NE(msg, nullptr);
  const GValue* faces = gst_structure_get_value(gst_message_get_structure(msg), "faces");
  ASSERT_EQ(gst_value_list_get_size(faces), 4u);
  std::vector<gint64> ids;
  for (guint i = 0; i < 4; ++i) {
    const GstStructure* face = gst_value_get_structure(gst_value_list_get_value(faces, i));
    gint64 id = -1;
    ids.push_back(gst_structure_get_int64(face, "track-id", &id) ? id : -1);
  }
  EXPECT_EQ(ids, (std::vector<gint64>{7, -1, -1, -1})) << "untracked and shared ids carry no track-id";
  gst_message_unref(msg);
  gst_element_set_bus(h->element, nullptr);
  gst_object_unref(bus);
}

}  // namespace

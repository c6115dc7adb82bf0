// async-tracks: tracked faces embedded on the element's background thread. The recording fake
// engine's gate stands for a slow engine: frames keep flowing while it is closed, a track's
// embedding reaches a later frame of the track (computed there once, cached after), at most two
// faces wait or run, and a flush, a new stream or the track's end drops work no frame can carry.
#include <gst/taconite/gsttaconitemeta.h>
#include <gst/taconite/gsttaconiteface.h>
#include <gst/taconite/gsttaconiteroi.h>
#include <gst/taconite/gsttaconitetracks.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "adaface_element.hpp"
#include "async_embedder.hpp"
#include "gst_test_support.hpp"

namespace {

using namespace gsttest;
using taconite::gst::adaface::AsyncEmbedder;
using taconite::gst::adaface::AsyncFace;

const char* kCaps = "video/x-raw,format=RGB,width=320,height=240,framerate=30/1";
constexpr auto C = GST_TACONITE_EMBEDDING_COMPUTED, K = GST_TACONITE_EMBEDDING_CACHED, S = GST_TACONITE_EMBEDDING_SKIPPED;

struct Face {
  int id, x, size;
};

GstBuffer* frame(int index, const std::vector<Face>& faces) {
  GstBuffer* buffer = rgb_buffer(320, 240, [&](int x, int y) {
    const std::uint8_t v = ((x / 4 + y / 4) % 2) ? 220 : 30;
    return std::array<std::uint8_t, 3>{v, static_cast<std::uint8_t>(v / 2 + x / 3), v};
  });
  GST_BUFFER_PTS(buffer) = index * (GST_SECOND / 30);
  for (const Face& f : faces) {
    GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(
        buffer, "face", static_cast<guint>(f.x), 10, static_cast<guint>(f.size), static_cast<guint>(f.size));
    gst_video_region_of_interest_meta_add_param(roi, gst_structure_new("object_id", "id", G_TYPE_INT, f.id, nullptr));
    gst_taconite_roi_set_detection(roi, 0.9);
  }
  return buffer;
}

// Polls `done` every millisecond for at most 5 s (the background thread's progress has no event).
template <typename Done>
bool eventually(Done done) {
  for (int i = 0; i < 5000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

class AsyncTracksTest : public ::testing::Test {
 protected:
  void SetUp() override { engine = install_fake_engine(); }
  void TearDown() override {
    engine->open_gate();
    if (h) gst_harness_teardown(h);
    uninstall_fake_engine();
  }
  void start(std::vector<std::pair<std::string, std::string>> props = {}) {
    props.insert(props.begin(), {{"bundle", "fake"}, {"input-mode", "rois"}, {"reinfer-mode", "best"},
                                 {"async-tracks", "true"}});
    h = adaface_harness(props);
    gst_harness_set_src_caps_str(h, kCaps);
  }
  // Pushes a frame and returns its faces' statuses; `kept` (if given) receives the buffer out.
  std::vector<GstTaconiteEmbeddingStatus> push(GstBuffer* in, GstBuffer** kept = nullptr) {
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    EXPECT_NE(out, nullptr);
    std::vector<GstTaconiteEmbeddingStatus> statuses;
    if (!out) return statuses;
    for (const auto* meta : embedding_metas(out)) statuses.push_back(meta->status);
    if (kept)
      *kept = out;
    else
      gst_buffer_unref(out);
    return statuses;
  }
  std::size_t calls() {
    std::lock_guard<std::mutex> guard(engine->lock);
    return engine->batch_sizes.size();
  }
  int waiting() {
    std::lock_guard<std::mutex> guard(engine->lock);
    return engine->calls_waiting;
  }
  std::shared_ptr<FakeEngineState> engine;
  GstHarness* h = nullptr;
};

using Row = std::vector<GstTaconiteEmbeddingStatus>;

TEST_F(AsyncTracksTest, FramesPassWhileTheEngineIsBlockedAndTheEmbeddingReachesALaterFrameOnce) {
  start();
  engine->close_gate();
  EXPECT_EQ(push(frame(0, {{1, 10, 60}})), Row{S}) << "no embedding yet: the frame does not wait for it";
  engine->wait_for_waiting_calls(1);
  for (int i = 1; i < 5; ++i)
    EXPECT_EQ(push(frame(i, {{1, 10, 60}})), Row{S}) << "frame " << i << " passes while the engine is blocked";
  EXPECT_EQ(waiting(), 1) << "the track's face is embedded once, not once per frame";
  engine->open_gate();
  ASSERT_TRUE(eventually([&] { return calls() == 1; }));
  int computed_at = -1;
  std::vector<Row> after;
  for (int i = 5; i < 200 && computed_at < 0; ++i) {
    const Row row = push(frame(i, {{1, 10, 60}}));
    if (row == Row{C}) computed_at = i;
    else ASSERT_EQ(row, Row{S}) << "frame " << i;
    if (computed_at < 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_GE(computed_at, 5) << "the background embedding reached a frame of its track";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(push(frame(300 + i, {{1, 10, 60}})), Row{K}) << "then it is cached";
  EXPECT_EQ(counter(h->element, "faces-embedded"), 1u);
  EXPECT_EQ(calls(), 1u);
}

TEST_F(AsyncTracksTest, TheBackgroundEmbeddingIsTheEngineOutputOfTheFirstFrame) {
  start();
  engine->close_gate();
  push(frame(0, {{1, 10, 60}}));
  engine->wait_for_waiting_calls(1);
  engine->open_gate();
  ASSERT_TRUE(eventually([&] { return calls() == 1; }));
  GstBuffer* out = nullptr;
  for (int i = 1; i < 200; ++i) {
    GstBuffer* candidate = nullptr;
    if (push(frame(i, {{1, 200, 100}}), &candidate) == Row{C}) {  // another box: not what was embedded
      out = candidate;
      break;
    }
    gst_buffer_unref(candidate);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_NE(out, nullptr);
  const GstTaconiteEmbeddingMeta* meta = embedding_metas(out).at(0);
  std::vector<float> expected;
  {
    std::lock_guard<std::mutex> guard(engine->lock);
    expected = fake_embedding(engine->inputs.at(0));
  }
  double norm = 0.0;
  for (float v : expected) norm += double(v) * v;
  norm = std::sqrt(norm);
  ASSERT_EQ(meta->dim, expected.size());
  EXPECT_NEAR(meta->norm, norm, 1e-3 * norm);
  for (std::size_t k = 0; k < expected.size(); ++k) ASSERT_NEAR(meta->embedding[k], expected[k] / norm, 1e-5) << k;
  EXPECT_GT(meta->cache_age, 0u) << "computed for an earlier frame";
  gst_buffer_unref(out);
}

// Two new tracks fill the embedder; a third is refused a place on kFirstEmbeddingPatience frames,
// which pass, and then its frame waits for a place, so no new track is left without an embedding
// while frames run ahead; each track gets its embedding once.
TEST_F(AsyncTracksTest, ANewTrackRefusedOnPatienceFramesWaitsForAPlaceAndEveryTrackGetsItsTurn) {
  start();
  engine->close_gate();
  const std::vector<Face> crowd = {{1, 0, 50}, {2, 100, 50}, {3, 200, 50}};
  const int patience = static_cast<int>(taconite::gst::adaface::kFirstEmbeddingPatience);
  for (int i = 0; i < patience; ++i) {
    EXPECT_EQ(push(frame(i, crowd)), (Row{S, S, S})) << "frame " << i << " passes";
    if (i == 0) engine->wait_for_waiting_calls(1);
  }
  ASSERT_EQ(gst_harness_push(h, frame(patience, crowd)), GST_FLOW_OK);
  GstBuffer* early = nullptr;
  for (int i = 0; i < 100 && !early; ++i) {  // 100 ms: the waiting frame must not come out meanwhile
    early = gst_harness_try_pull(h);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(early, nullptr) << "the frame after the patience waits for a place for track 3";
  if (early) gst_buffer_unref(early);
  engine->open_gate();
  GstBuffer* out = gst_harness_pull(h);
  ASSERT_NE(out, nullptr);
  gst_buffer_unref(out);
  std::vector<int> computed(3, 0);
  for (int i = patience + 1; i < 400; ++i) {
    const Row row = push(frame(i, crowd));
    ASSERT_EQ(row.size(), 3u);
    for (int t = 0; t < 3; ++t) computed[t] += row[t] == C;
    if (computed == std::vector<int>{1, 1, 1}) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(computed, (std::vector<int>{1, 1, 1})) << "each track's embedding reaches one frame as computed";
  EXPECT_EQ(calls(), 3u);
  std::lock_guard<std::mutex> guard(engine->lock);
  for (std::size_t n : engine->batch_sizes) EXPECT_EQ(n, 1u);
}

// A flush while the frame waits for a place: the wait ends, nothing is left blocked.
TEST_F(AsyncTracksTest, AFlushEndsTheWaitForAPlace) {
  start();
  engine->close_gate();
  const std::vector<Face> crowd = {{1, 0, 50}, {2, 100, 50}, {3, 200, 50}};
  const int patience = static_cast<int>(taconite::gst::adaface::kFirstEmbeddingPatience);
  for (int i = 0; i < patience; ++i) push(frame(i, crowd));
  ASSERT_EQ(gst_harness_push(h, frame(patience, crowd)), GST_FLOW_OK);  // waits for a place
  engine->wait_for_waiting_calls(1);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_start()));  // returns: the wait was cancelled
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
  engine->open_gate();
}

TEST_F(AsyncTracksTest, AFlushDropsTheRunningEmbeddingAndTheTrackIsEmbeddedAgain) {
  start();
  engine->close_gate();
  push(frame(0, {{1, 10, 60}}));
  engine->wait_for_waiting_calls(1);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_start()));
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
  engine->open_gate();
  ASSERT_TRUE(eventually([&] { return calls() == 1; }));
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_segment(&segment)));
  // The dropped result would be computed on the first frame; a new submission is embedded again.
  bool computed = false;
  for (int i = 0; i < 200 && !computed; ++i) {
    computed = push(frame(i, {{1, 10, 60}})) == Row{C};
    if (!computed) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_TRUE(computed);
  EXPECT_EQ(calls(), 2u) << "the flushed face's result was dropped, the track embedded again";
}

TEST_F(AsyncTracksTest, AnEndedTracksRunningEmbeddingIsDroppedNotStored) {
  start();
  engine->close_gate();
  push(frame(0, {{1, 10, 60}}));
  engine->wait_for_waiting_calls(1);
  const gint64 ids[] = {1};
  ASSERT_TRUE(gst_harness_push_event(h, gst_taconite_tracks_ended_event_new(ids, nullptr, 1, "lost")));
  engine->open_gate();
  ASSERT_TRUE(eventually([&] { return calls() == 1; }));
  // Had the ended track's result been kept, id 1 would show it without a second engine call.
  bool computed = false;
  for (int i = 1; i < 200 && !computed; ++i) {
    computed = push(frame(i, {{1, 10, 60}})) == Row{C};
    if (!computed) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_TRUE(computed);
  EXPECT_EQ(calls(), 2u);
}

TEST_F(AsyncTracksTest, AnEngineErrorInTheBackgroundIsTheElementsError) {
  start();
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(h->element, bus);
  engine->fail_embed = true;
  EXPECT_EQ(push(frame(0, {{1, 10, 60}})), Row{S}) << "the frame passed before the engine failed";
  // The failure is taken at a later frame: it becomes the element's error and upstream's flow error.
  GstFlowReturn ret = GST_FLOW_OK;
  for (int i = 1; i < 2000 && ret == GST_FLOW_OK; ++i) {
    ret = gst_harness_push(h, frame(i, {{1, 10, 60}}));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(ret, GST_FLOW_ERROR);
  GstMessage* error = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  ASSERT_NE(error, nullptr);
  GError* gerror = nullptr;
  gchar* debug = nullptr;
  gst_message_parse_error(error, &gerror, &debug);
  EXPECT_NE(std::string(debug).find("fake device failure"), std::string::npos) << debug;
  EXPECT_NE(std::string(debug).find("async-tracks"), std::string::npos) << debug;
  g_error_free(gerror);
  g_free(debug);
  gst_message_unref(error);
  gst_element_set_bus(h->element, nullptr);
  gst_object_unref(bus);
}

TEST_F(AsyncTracksTest, FacesWithoutATrackAreStillEmbeddedOnTheirFrame) {
  start({{"untracked", "every-frame"}});
  GstBuffer* in = frame(0, {});
  gst_buffer_add_video_region_of_interest_meta(in, "face", 10, 10, 60, 60);
  EXPECT_EQ(push(in), Row{C});
  EXPECT_EQ(calls(), 1u);
}

TEST_F(AsyncTracksTest, ChangesOnlyInNullOrReady) {
  start();
  gboolean value = FALSE;
  g_object_get(h->element, "async-tracks", &value, nullptr);
  EXPECT_TRUE(value);
  g_object_set(h->element, "async-tracks", FALSE, nullptr);  // refused while playing (a warning)
  g_object_get(h->element, "async-tracks", &value, nullptr);
  EXPECT_TRUE(value);
}

// The background embedder on its own, on a client of the shared engine (the fake behind it).
class AsyncEmbedderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine = install_fake_engine();
    taconite::gst::EngineRequest request;
    request.bundle = "fake";
    auto client = taconite::gst::open_engine_client(request);
    ASSERT_TRUE(client);
    embedder = std::make_unique<AsyncEmbedder>(std::move(client).value());
  }
  void TearDown() override {
    engine->open_gate();
    embedder.reset();
    uninstall_fake_engine();
  }
  bool submit(gint64 track, bool first = true) {
    AsyncFace face;
    face.track = track;
    return embedder->submit(face, first, std::vector<float>(3 * 112 * 112, 0.01f * static_cast<float>(track)), 3,
                            112, 112);
  }
  std::shared_ptr<FakeEngineState> engine;
  std::unique_ptr<AsyncEmbedder> embedder;
};

TEST_F(AsyncEmbedderTest, RefusesBeyondTwoFacesAndASecondFaceOfATrack) {
  engine->close_gate();
  EXPECT_TRUE(submit(1));
  engine->wait_for_waiting_calls(1);
  EXPECT_FALSE(submit(1)) << "one face per track";
  EXPECT_TRUE(submit(2));
  EXPECT_TRUE(embedder->full());
  EXPECT_FALSE(submit(3));
  EXPECT_TRUE(embedder->has(1) && embedder->has(2) && !embedder->has(3));
  engine->open_gate();
  ASSERT_TRUE(eventually([&] { return !embedder->busy(); }));
  const auto done = embedder->take_done();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].face.track, 1);
  EXPECT_EQ(done[1].face.track, 2);
  EXPECT_TRUE(done[0].embedding && done[1].embedding);
  EXPECT_FALSE(embedder->has(1)) << "taken: the track may be submitted again";
  EXPECT_TRUE(submit(1));
}

TEST_F(AsyncEmbedderTest, AFirstEmbeddingTakesTheWaitingReembeddingsPlace) {
  engine->close_gate();
  ASSERT_TRUE(submit(1));
  engine->wait_for_waiting_calls(1);
  ASSERT_TRUE(submit(2, /*first=*/false));
  EXPECT_FALSE(submit(3, /*first=*/false)) << "full: a re-embedding waits for a later frame";
  EXPECT_TRUE(submit(3, /*first=*/true));
  EXPECT_FALSE(embedder->has(2)) << "the re-embedding gave its place";
  EXPECT_FALSE(submit(4, /*first=*/true)) << "full of first embeddings";
  std::thread waiter([&] { EXPECT_TRUE(embedder->wait_for_room()); });
  engine->open_gate();
  waiter.join();
  ASSERT_TRUE(eventually([&] { return !embedder->busy(); }));
  const auto done = embedder->take_done();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].face.track, 1);
  EXPECT_EQ(done[1].face.track, 3);
}

TEST_F(AsyncEmbedderTest, CancelEndsTheWaitForRoom) {
  engine->close_gate();
  ASSERT_TRUE(submit(1));
  ASSERT_TRUE(submit(2));
  engine->wait_for_waiting_calls(1);
  std::thread waiter([&] { EXPECT_FALSE(embedder->wait_for_room()); });
  embedder->cancel();
  waiter.join();
}

TEST_F(AsyncEmbedderTest, AnEndedTracksWaitingAndRunningFacesAreDropped) {
  engine->close_gate();
  ASSERT_TRUE(submit(1));
  engine->wait_for_waiting_calls(1);
  ASSERT_TRUE(submit(2));
  taconite::gst::TracksEnded ended;
  ended.tracks = {{1, "u1"}, {2, "u2"}};
  embedder->forget(ended);
  EXPECT_FALSE(embedder->has(1) || embedder->has(2));
  engine->open_gate();
  ASSERT_TRUE(eventually([&] { return !embedder->busy(); }));
  EXPECT_TRUE(embedder->take_done().empty());
  std::lock_guard<std::mutex> guard(engine->lock);
  EXPECT_EQ(engine->batch_sizes.size(), 1u) << "the waiting face never reached the engine";
}

TEST_F(AsyncEmbedderTest, CancelRefusesUntilResumeAndAnEngineErrorIsAResult) {
  embedder->cancel();
  EXPECT_FALSE(submit(1));
  embedder->resume();
  engine->fail_embed = true;
  ASSERT_TRUE(submit(1));
  ASSERT_TRUE(eventually([&] { return !embedder->busy(); }));
  const auto done = embedder->take_done();
  ASSERT_EQ(done.size(), 1u);
  ASSERT_FALSE(done[0].embedding);
  EXPECT_NE(done[0].embedding.error().message.find("fake device failure"), std::string::npos);
}

TEST_F(AsyncEmbedderTest, DestroyedWhileAFaceRunsJoinsAfterIt) {
  engine->close_gate();
  ASSERT_TRUE(submit(1));
  ASSERT_TRUE(submit(2));
  engine->wait_for_waiting_calls(1);
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    engine->open_gate();
  });
  embedder.reset();  // waits for the running face only
  opener.join();
  std::lock_guard<std::mutex> guard(engine->lock);
  EXPECT_EQ(engine->batch_sizes.size(), 1u);
}

}  // namespace

// Load behaviour with an artificially slow (gated) fake engine: leaky=skip passes frames on
// without embeddings (flagged, counted, QoS messages) and never drops video; downstream QoS
// events; interval; no deadlock at EOS or flush.
#include <chrono>
#include <future>
#include <thread>

#include "gst_test_support.hpp"

namespace {

using namespace gsttest;

constexpr auto kHangGuard = std::chrono::seconds(20);  // for calls that must return; not a timing check


GstTaconiteEmbeddingStatus status_of(GstBuffer* buffer) {
  const auto metas = embedding_metas(buffer);
  EXPECT_EQ(metas.size(), 1u);
  return metas.empty() ? GST_TACONITE_EMBEDDING_COMPUTED : metas[0]->status;
}

void wait_for_eos(GstHarness* h) {
  GstEvent* event;
  while ((event = gst_harness_pull_event(h)) && GST_EVENT_TYPE(event) != GST_EVENT_EOS) gst_event_unref(event);
  ASSERT_NE(event, nullptr);
  gst_event_unref(event);
}

class LoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine = install_fake_engine();
    bus = gst_bus_new();
  }
  void TearDown() override {
    engine->open_gate();
    if (h) {
      gst_element_set_bus(h->element, nullptr);
      gst_harness_teardown(h);
    }
    gst_bus_set_flushing(bus, TRUE);  // queued messages hold references to the element
    gst_object_unref(bus);
    uninstall_fake_engine();
  }
  void start(std::vector<std::pair<std::string, std::string>> props) {
    props.insert(props.begin(), {{"bundle", "fake"}, {"input-mode", "crops"}});
    h = adaface_harness(props);
    gst_element_set_bus(h->element, bus);
    gst_harness_set_src_caps_str(h, kRgbCaps);
  }
  // QoS messages posted so far: their (processed, dropped) stats.
  std::vector<std::pair<guint64, guint64>> qos_messages() {
    std::vector<std::pair<guint64, guint64>> out;
    while (GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_QOS)) {
      GstFormat format;
      guint64 processed = 0, dropped = 0;
      gst_message_parse_qos_stats(msg, &format, &processed, &dropped);
      EXPECT_EQ(format, GST_FORMAT_BUFFERS);
      out.emplace_back(processed, dropped);
      gst_message_unref(msg);
    }
    return out;
  }
  std::shared_ptr<FakeEngineState> engine;
  GstBus* bus = nullptr;
  GstHarness* h = nullptr;
};

TEST_F(LoadTest, SkipPassesFramesBeyondTheQueueWithoutEmbeddings) {
  start({{"leaky", "skip"}, {"max-queued", "2"}});
  engine->close_gate();  // the engine is "slow": it holds frame 0 until the gate opens
  ASSERT_EQ(gst_harness_push(h, stream_frame(0)), GST_FLOW_OK);
  engine->wait_for_waiting_calls(1);
  // Frames 1-2 fill the queue; 3-6 arrive while it is full: upstream is not blocked, they are
  // flagged to pass without embeddings.
  for (int i = 1; i <= 6; ++i) ASSERT_EQ(gst_harness_push(h, stream_frame(i)), GST_FLOW_OK);
  engine->open_gate();
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
  for (int i = 0; i <= 6; ++i) {
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(GST_BUFFER_PTS(out), i * kFrame) << "frames keep their order";
    const GstTaconiteEmbeddingStatus expected = i <= 2 ? GST_TACONITE_EMBEDDING_COMPUTED : GST_TACONITE_EMBEDDING_SKIPPED;
    EXPECT_EQ(status_of(out), expected) << "frame " << i;
    if (GstTaconiteEmbeddingMeta* meta = gst_buffer_get_taconite_embedding_meta(out)) {
      EXPECT_EQ(meta->dim, expected == GST_TACONITE_EMBEDDING_SKIPPED ? 0u : 512u);
    }
    gst_buffer_unref(out);
  }
  wait_for_eos(h);
  EXPECT_EQ(counter(h->element, "frames-in"), 7u);
  EXPECT_EQ(counter(h->element, "frames-out"), 7u) << "video is never dropped";
  EXPECT_EQ(counter(h->element, "faces-embedded"), 3u);
  EXPECT_EQ(counter(h->element, "faces-skipped"), 4u);
  EXPECT_EQ(engine->faces_seen(), 3u);
  const auto qos = qos_messages();
  ASSERT_EQ(qos.size(), 4u) << "one QoS message per skipped frame";
  EXPECT_EQ(qos.back(), std::make_pair(guint64{3}, guint64{4})) << "processed / dropped totals";
}

TEST_F(LoadTest, NoLeakyBlocksInsteadOfSkipping) {
  start({{"max-queued", "1"}});
  engine->close_gate();
  ASSERT_EQ(gst_harness_push(h, stream_frame(0)), GST_FLOW_OK);
  engine->wait_for_waiting_calls(1);
  ASSERT_EQ(gst_harness_push(h, stream_frame(1)), GST_FLOW_OK);  // fills the queue
  std::thread producer([&] { EXPECT_EQ(gst_harness_push(h, stream_frame(2)), GST_FLOW_OK); });  // blocks
  engine->open_gate();
  producer.join();
  for (int i = 0; i < 3; ++i) {
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(status_of(out), GST_TACONITE_EMBEDDING_COMPUTED);
    gst_buffer_unref(out);
  }
  EXPECT_EQ(counter(h->element, "faces-skipped"), 0u);
  EXPECT_TRUE(qos_messages().empty());
}

TEST_F(LoadTest, SkipUnderLoadSurvivesFlushAndEos) {
  start({{"leaky", "skip"}, {"max-queued", "1"}});
  engine->close_gate();
  ASSERT_EQ(gst_harness_push(h, stream_frame(0)), GST_FLOW_OK);
  engine->wait_for_waiting_calls(1);
  for (int i = 1; i <= 3; ++i) ASSERT_EQ(gst_harness_push(h, stream_frame(i)), GST_FLOW_OK);
  // Flush while the engine holds frame 0 and skipped frames wait: opening the gate from another
  // thread lets the task finish its iteration; nothing deadlocks.
  std::thread opener([&] { engine->open_gate(); });
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_start()));
  opener.join();
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
  while (GstBuffer* stale = gst_harness_try_pull(h)) gst_buffer_unref(stale);  // frame 0 may have left before the flush
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_segment(&segment)));
  for (int i = 10; i < 13; ++i) ASSERT_EQ(gst_harness_push(h, stream_frame(i)), GST_FLOW_OK);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
  for (int i = 10; i < 13; ++i) {
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(GST_BUFFER_PTS(out), i * kFrame);
    gst_buffer_unref(out);
  }
  wait_for_eos(h);
}

TEST_F(LoadTest, DownstreamQosMakesLateFramesSkip) {
  start({{"leaky", "skip"}});
  // Downstream reports it is 5 frames late at frame 0: frames up to running time 5 are late.
  ASSERT_TRUE(gst_harness_push_upstream_event(
      h, gst_event_new_qos(GST_QOS_TYPE_UNDERFLOW, 0.5, static_cast<GstClockTimeDiff>(5 * kFrame), 0)));
  for (int i = 0; i < 8; ++i) {
    GstBuffer* out = gst_harness_push_and_pull(h, stream_frame(i));
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(status_of(out), i <= 5 ? GST_TACONITE_EMBEDDING_SKIPPED : GST_TACONITE_EMBEDDING_COMPUTED) << i;
    gst_buffer_unref(out);
  }
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
  wait_for_eos(h);  // frames-out counts after the push returned
  EXPECT_EQ(counter(h->element, "faces-skipped"), 6u);
  EXPECT_EQ(counter(h->element, "frames-out"), 8u);
  EXPECT_EQ(qos_messages().size(), 6u);
}

TEST_F(LoadTest, DownstreamQosIsIgnoredWithoutLeaky) {
  start({});
  ASSERT_TRUE(gst_harness_push_upstream_event(
      h, gst_event_new_qos(GST_QOS_TYPE_UNDERFLOW, 0.5, static_cast<GstClockTimeDiff>(5 * kFrame), 0)));
  GstBuffer* out = gst_harness_push_and_pull(h, stream_frame(0));
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(status_of(out), GST_TACONITE_EMBEDDING_COMPUTED);
  gst_buffer_unref(out);
}

TEST_F(LoadTest, IntervalEmbedsEveryNthFrame) {
  start({{"interval", "3"}});
  for (int i = 0; i < 7; ++i) {
    GstBuffer* out = gst_harness_push_and_pull(h, stream_frame(i));
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(embedding_metas(out).size(), i % 3 == 0 ? 1u : 0u) << "frame " << i;
    gst_buffer_unref(out);
  }
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
  wait_for_eos(h);  // frames-out counts after the push returned
  EXPECT_EQ(engine->faces_seen(), 3u);
  EXPECT_EQ(counter(h->element, "frames-out"), 7u);
  EXPECT_EQ(counter(h->element, "faces-skipped"), 0u) << "interval frames are not 'skipped'";
}

TEST_F(LoadTest, ABufferQueuedTwiceIsSkippedTwice) {
  start({{"leaky", "skip"}, {"max-queued", "1"}});
  engine->close_gate();
  ASSERT_EQ(gst_harness_push(h, stream_frame(0)), GST_FLOW_OK);
  engine->wait_for_waiting_calls(1);
  ASSERT_EQ(gst_harness_push(h, stream_frame(1)), GST_FLOW_OK);  // the backlog of 1
  GstBuffer* twice = stream_frame(2);
  ASSERT_EQ(gst_harness_push(h, gst_buffer_ref(twice)), GST_FLOW_OK);
  ASSERT_EQ(gst_harness_push(h, twice), GST_FLOW_OK);
  engine->open_gate();
  const GstTaconiteEmbeddingStatus expected[] = {GST_TACONITE_EMBEDDING_COMPUTED, GST_TACONITE_EMBEDDING_COMPUTED,
                                                 GST_TACONITE_EMBEDDING_SKIPPED, GST_TACONITE_EMBEDDING_SKIPPED};
  for (int i = 0; i < 4; ++i) {
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(status_of(out), expected[i]) << "output " << i << ": each queued buffer keeps its own flag";
    gst_buffer_unref(out);
  }
  EXPECT_EQ(engine->faces_seen(), 2u);
}

TEST_F(LoadTest, SwitchingToSkipReleasesAWaitingUpstream) {
  start({{"max-queued", "1"}});
  engine->close_gate();
  ASSERT_EQ(gst_harness_push(h, stream_frame(0)), GST_FLOW_OK);
  engine->wait_for_waiting_calls(1);
  ASSERT_EQ(gst_harness_push(h, stream_frame(1)), GST_FLOW_OK);  // the queue is full
  std::future<GstFlowReturn> blocked =
      std::async(std::launch::async, [&] { return gst_harness_push(h, stream_frame(2)); });
  // Let the chain call start waiting for room (frames-in counts it on entry; the pause only makes
  // it likely that it waits already, it cannot make the test pass wrongly).
  while (counter(h->element, "frames-in") < 3) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  gst_util_set_object_arg(G_OBJECT(h->element), "leaky", "skip");  // the limit becomes 4 x max-queued
  const bool released = blocked.wait_for(kHangGuard) == std::future_status::ready;
  EXPECT_TRUE(released) << "the waiting chain call must re-read leaky";
  engine->open_gate();
  EXPECT_EQ(blocked.get(), GST_FLOW_OK);
  for (int i = 0; i < 3; ++i) gst_buffer_unref(gst_harness_pull(h));
}

// max-queued x 4 (the leaky=skip bound) must not wrap around in 32 bits (to 0: nothing fits).
void expect_buffers_pass(GstHarness* h) {
  for (int i = 0; i < 3; ++i) {
    std::future<GstFlowReturn> push =
        std::async(std::launch::async, [&] { return gst_harness_push(h, stream_frame(i)); });
    if (push.wait_for(kHangGuard) != std::future_status::ready) {
      ADD_FAILURE() << "chain blocked on an empty queue";
      gst_element_set_state(h->element, GST_STATE_NULL);  // flushing releases it
      push.wait();
      return;
    }
    ASSERT_EQ(push.get(), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(GST_BUFFER_PTS(out), i * kFrame);
    gst_buffer_unref(out);
  }
}

TEST_F(LoadTest, SkipWithMaxQueuedOf2To30PassesBuffers) {
  start({{"leaky", "skip"}, {"max-queued", "1073741824"}});
  expect_buffers_pass(h);
}

TEST_F(LoadTest, SkipWithMaxQueuedOf2To31PassesBuffers) {
  start({{"leaky", "skip"}, {"max-queued", "2147483648"}});
  expect_buffers_pass(h);
}

// A live 30 fps source into a clock-synchronised sink with leaky=skip max-queued=1 and a fake
// engine taking `engine_ms` per frame; returns faces-skipped (every frame comes out).
guint64 skipped_in_live_pipeline(FakeEngineState& engine, int engine_ms, int frames, const char* sink) {
  engine.delay_ms = engine_ms;
  gchar* description = g_strdup_printf(
      "videotestsrc is-live=true num-buffers=%d ! video/x-raw,format=RGB,width=112,height=112,framerate=30/1 ! "
      "taconiteadaface name=t bundle=fake input-mode=crops leaky=skip max-queued=1 ! %s",
      frames, sink);
  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launch(description, &error);
  g_free(description);
  EXPECT_NE(pipeline, nullptr) << (error ? error->message : "");
  g_clear_error(&error);
  if (!pipeline) return 0;
  GstElement* t = gst_bin_get_by_name(GST_BIN(pipeline), "t");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* end = gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND,  // hang guard
                                               static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  EXPECT_NE(end, nullptr);
  if (end) {
    EXPECT_EQ(GST_MESSAGE_TYPE(end), GST_MESSAGE_EOS);
    gst_message_unref(end);
  }
  EXPECT_EQ(counter(t, "frames-out"), static_cast<guint64>(frames)) << "video is never dropped";
  const guint64 skipped = counter(t, "faces-skipped");
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(t);
  gst_object_unref(pipeline);
  return skipped;
}

TEST_F(LoadTest, LiveFramesWaitingForASyncingSinkAreNotSkipped) {
  // The sink holds each frame for its latency (one frame from the source plus an 80 ms processing
  // deadline), so frames wait in the queue while the task is blocked pushing: that is not the
  // engine falling behind, and a fast engine embeds (almost) every frame.
  const guint64 skipped =
      skipped_in_live_pipeline(*engine, 0, 90, "fakesink sync=true processing-deadline=80000000");
  EXPECT_LE(skipped, 9u) << "frames held back by the sink's clock sync were counted as engine backlog";
}

TEST_F(LoadTest, LiveWithAnEngineSlowerThanTheFrameRateStillSkips) {
  const guint64 skipped = skipped_in_live_pipeline(*engine, 50, 30, "fakesink sync=true");
  EXPECT_GT(skipped, 0u) << "a 50 ms engine cannot keep up with 30 fps";
}

}  // namespace

// One engine per (bundle, backend) shared by several elements: one load, cross-stream batching,
// per-stream order, independent flushing. With the recording fake engine.
#include <cmath>
#include <thread>

#include "gst_test_support.hpp"
#include "shared_engine.hpp"

namespace {

using namespace gsttest;

constexpr GstClockTime kFrame = GST_SECOND / 30;
const char* kRgbCaps = "video/x-raw,format=RGB,width=112,height=112,framerate=30/1";

PixelFn pixels(int stream, int index) {
  return [=](int x, int y) {
    return std::array<std::uint8_t, 3>{static_cast<std::uint8_t>(40 * stream + 10), static_cast<std::uint8_t>(x + 3 * index),
                                       static_cast<std::uint8_t>(y)};
  };
}

GstBuffer* frame(int stream, int index) {
  GstBuffer* buffer = rgb_buffer(112, 112, pixels(stream, index));
  GST_BUFFER_PTS(buffer) = index * kFrame;
  GST_BUFFER_DURATION(buffer) = kFrame;
  return buffer;
}

// The buffer carries exactly the embedding of its own pixels (stream, index): no mix-up
// between streams sharing a batch.
void expect_own_embedding(GstBuffer* out, int stream, int index) {
  const auto metas = embedding_metas(out);
  ASSERT_EQ(metas.size(), 1u);
  const std::vector<float> raw = fake_embedding(expected_chw(112, 112, pixels(stream, index)));
  double dot = 0, norm = 0;
  for (std::size_t k = 0; k < raw.size(); ++k) {
    dot += static_cast<double>(raw[k]) * metas[0]->embedding[k];
    norm += static_cast<double>(raw[k]) * raw[k];
  }
  EXPECT_NEAR(dot / std::sqrt(norm), 1.0, 1e-6) << "stream " << stream << " frame " << index;
  EXPECT_NEAR(metas[0]->norm, std::sqrt(norm), 1e-3 * std::sqrt(norm));
}

std::shared_ptr<taconite::gst::SharedEngine> shared_engine() {
  taconite::gst::EngineRequest request;
  request.bundle = "fake";
  request.backend = "auto";
  return taconite::gst::find_shared_engine(request);
}

// Waits (no deadline: the tasks are guaranteed to get there) until `n` requests are queued.
void wait_for_queued(std::size_t n) {
  auto engine = shared_engine();
  ASSERT_NE(engine, nullptr);
  while (taconite::gst::shared_engine_queued(*engine) < n) std::this_thread::yield();
}

class SharedEngineTest : public ::testing::Test {
 protected:
  void SetUp() override { engine = install_fake_engine(); }
  void TearDown() override {
    engine->open_gate();
    for (GstHarness* h : harnesses) gst_harness_teardown(h);
    uninstall_fake_engine();
  }
  std::vector<GstHarness*> streams(int n, const std::string& batch_size = "1") {
    for (int i = 0; i < n; ++i) {
      GstHarness* h = adaface_harness({{"bundle", "fake"}, {"input-mode", "crops"}, {"batch-size", batch_size}});
      gst_harness_set_src_caps_str(h, kRgbCaps);
      harnesses.push_back(h);
    }
    return harnesses;
  }
  std::shared_ptr<FakeEngineState> engine;
  std::vector<GstHarness*> harnesses;
};

TEST_F(SharedEngineTest, TwoStreamsLoadOneEngineAndKeepTheirOwnResults) {
  auto hs = streams(2);
  EXPECT_EQ(engine->opened, 1) << "the second element must reuse the first one's engine";
  for (int i = 0; i < 4; ++i)
    for (int s = 0; s < 2; ++s) ASSERT_EQ(gst_harness_push(hs[s], frame(s, i)), GST_FLOW_OK);
  for (int s = 0; s < 2; ++s)
    for (int i = 0; i < 4; ++i) {
      GstBuffer* out = gst_harness_pull(hs[s]);
      ASSERT_NE(out, nullptr);
      EXPECT_EQ(GST_BUFFER_PTS(out), i * kFrame);
      expect_own_embedding(out, s, i);
      gst_buffer_unref(out);
    }
  EXPECT_EQ(engine->faces_seen(), 8u);
}

TEST_F(SharedEngineTest, FourStreamsAreBatchedIntoOneEngineCall) {
  auto hs = streams(4, "4");
  EXPECT_EQ(engine->opened, 1);
  engine->close_gate();
  ASSERT_EQ(gst_harness_push(hs[0], frame(0, 0)), GST_FLOW_OK);
  engine->wait_for_waiting_calls(1);  // stream 0's face is in the engine
  for (int s = 1; s < 4; ++s) ASSERT_EQ(gst_harness_push(hs[s], frame(s, 0)), GST_FLOW_OK);
  wait_for_queued(3);
  engine->open_gate();
  for (int s = 0; s < 4; ++s) {
    GstBuffer* out = gst_harness_pull(hs[s]);
    ASSERT_NE(out, nullptr);
    expect_own_embedding(out, s, 0);
    gst_buffer_unref(out);
  }
  std::lock_guard<std::mutex> guard(engine->lock);
  EXPECT_EQ(engine->batch_sizes, (std::vector<std::size_t>{1, 3})) << "streams 1-3 must share one engine call";
}

TEST_F(SharedEngineTest, FourConcurrentStreamsKeepPerStreamOrder) {
  constexpr int kFrames = 24;
  auto hs = streams(4, "3");
  std::vector<std::thread> producers;
  for (int s = 0; s < 4; ++s)
    producers.emplace_back([&, s] {
      for (int i = 0; i < kFrames; ++i) EXPECT_EQ(gst_harness_push(hs[s], frame(s, i)), GST_FLOW_OK);
    });
  for (int s = 0; s < 4; ++s)
    for (int i = 0; i < kFrames; ++i) {
      GstBuffer* out = gst_harness_pull(hs[s]);
      ASSERT_NE(out, nullptr);
      EXPECT_EQ(GST_BUFFER_PTS(out), i * kFrame) << "stream " << s;
      expect_own_embedding(out, s, i);
      gst_buffer_unref(out);
    }
  for (auto& t : producers) t.join();
  EXPECT_EQ(engine->faces_seen(), 4u * kFrames);
  std::lock_guard<std::mutex> guard(engine->lock);
  for (std::size_t b : engine->batch_sizes) EXPECT_LE(b, 3u) << "batch-size caps the faces per call";
}

TEST_F(SharedEngineTest, FlushOfOneStreamDoesNotWaitForOrDisturbTheOther) {
  auto hs = streams(2, "2");
  engine->close_gate();
  ASSERT_EQ(gst_harness_push(hs[0], frame(0, 0)), GST_FLOW_OK);
  engine->wait_for_waiting_calls(1);  // stream 0 occupies the engine
  ASSERT_EQ(gst_harness_push(hs[1], frame(1, 0)), GST_FLOW_OK);
  wait_for_queued(1);  // stream 1 waits behind it

  // Flushing stream 1 withdraws its request: this returns while the engine is still busy.
  ASSERT_TRUE(gst_harness_push_event(hs[1], gst_event_new_flush_start()));
  ASSERT_TRUE(gst_harness_push_event(hs[1], gst_event_new_flush_stop(TRUE)));
  EXPECT_EQ(taconite::gst::shared_engine_queued(*shared_engine()), 0u);

  engine->open_gate();
  GstBuffer* out = gst_harness_pull(hs[0]);
  ASSERT_NE(out, nullptr);
  expect_own_embedding(out, 0, 0);
  gst_buffer_unref(out);

  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  ASSERT_TRUE(gst_harness_push_event(hs[1], gst_event_new_segment(&segment)));
  ASSERT_EQ(gst_harness_push(hs[1], frame(1, 5)), GST_FLOW_OK);
  out = gst_harness_pull(hs[1]);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(GST_BUFFER_PTS(out), 5 * kFrame) << "the flushed frame must not come out";
  expect_own_embedding(out, 1, 5);
  gst_buffer_unref(out);
  EXPECT_EQ(engine->faces_seen(), 2u) << "the withdrawn face never reached the engine";
  ASSERT_TRUE(gst_harness_push_event(hs[1], gst_event_new_eos()));
  GstEvent* event;  // frames-out counts once the push returned: wait for the EOS behind it
  while ((event = gst_harness_pull_event(hs[1])) && GST_EVENT_TYPE(event) != GST_EVENT_EOS) gst_event_unref(event);
  ASSERT_NE(event, nullptr);
  gst_event_unref(event);
  GstElement* e1 = hs[1]->element;
  guint64 frames_out = 0;
  g_object_get(e1, "frames-out", &frames_out, nullptr);
  EXPECT_EQ(frames_out, 1u);
}

TEST_F(SharedEngineTest, EngineIsReleasedWithTheLastElement) {
  auto hs = streams(2);
  ASSERT_NE(shared_engine(), nullptr);
  gst_harness_teardown(hs[0]);
  ASSERT_NE(shared_engine(), nullptr) << "the second element still uses it";
  gst_harness_teardown(hs[1]);
  harnesses.clear();
  EXPECT_EQ(shared_engine(), nullptr);
}

}  // namespace

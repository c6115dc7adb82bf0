// One engine per (bundle, backend) shared by several elements: one load, cross-stream batching,
// per-stream order, independent flushing, sticky cancellation, failures confined to the request
// that fails, idle streams not waited for, canonical registry keys and per-key loading, several
// sessions running at once. With the recording fake engine, a scripted engine driven straight
// through the SharedEngine API, and the real runtime on the test bundle.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <future>
#include <map>
#include <new>
#include <optional>
#include <thread>
#include <unistd.h>

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
  std::vector<GstHarness*> streams(int n, const std::string& batch_size = "1", const std::string& sessions = "1") {
    for (int i = 0; i < n; ++i) {
      GstHarness* h = adaface_harness(
          {{"bundle", "fake"}, {"input-mode", "crops"}, {"batch-size", batch_size}, {"sessions", sessions}});
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

class SharedEngineOrderTest : public SharedEngineTest, public ::testing::WithParamInterface<const char*> {};

// With one session and with two (whose workers finish batches in any order).
TEST_P(SharedEngineOrderTest, FourConcurrentStreamsKeepPerStreamOrder) {
  constexpr int kFrames = 24;
  auto hs = streams(4, "3", GetParam());
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
  EXPECT_EQ(taconite::gst::shared_engine_stats(*shared_engine()).sessions, std::stoul(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Sessions, SharedEngineOrderTest, ::testing::Values("1", "2"));

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

// A stream's flush or stop must not wait for other streams' faces (batch-timeout 3 s here): these
// return far below it (1.5 s is a hang guard, not a speed claim).
constexpr auto kHangGuard = std::chrono::milliseconds(1500);

// With sessions=2 two streams' faces are in the engine at once; a third stream queued behind them
// flushes without waiting for either and then resumes.
TEST_F(SharedEngineTest, TwoSessionsEmbedTwoStreamsAtOnceAndAQueuedThirdFlushesPromptly) {
  auto hs = streams(3, "1", "2");
  EXPECT_EQ(engine->opened, 1) << "one engine, two sessions of it";
  engine->close_gate();
  for (int s = 0; s < 2; ++s) ASSERT_EQ(gst_harness_push(hs[s], frame(s, 0)), GST_FLOW_OK);
  {
    std::unique_lock<std::mutex> guard(engine->lock);  // 30 s: a hang guard failing the test
    ASSERT_TRUE(engine->changed.wait_for(guard, std::chrono::seconds(30), [&] { return engine->calls_waiting == 2; }))
        << "the second stream's face never reached the engine while the first one's was in it";
  }
  ASSERT_EQ(gst_harness_push(hs[2], frame(2, 0)), GST_FLOW_OK);
  wait_for_queued(1);  // both sessions are busy
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(gst_harness_push_event(hs[2], gst_event_new_flush_start()));
  ASSERT_TRUE(gst_harness_push_event(hs[2], gst_event_new_flush_stop(TRUE)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, kHangGuard);
  EXPECT_EQ(taconite::gst::shared_engine_queued(*shared_engine()), 0u);

  engine->open_gate();
  for (int s = 0; s < 2; ++s) {
    GstBuffer* out = gst_harness_pull(hs[s]);
    ASSERT_NE(out, nullptr);
    expect_own_embedding(out, s, 0);
    gst_buffer_unref(out);
  }
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  ASSERT_TRUE(gst_harness_push_event(hs[2], gst_event_new_segment(&segment)));
  ASSERT_EQ(gst_harness_push(hs[2], frame(2, 1)), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(hs[2]);
  ASSERT_NE(out, nullptr);
  expect_own_embedding(out, 2, 1);
  gst_buffer_unref(out);
  EXPECT_EQ(engine->faces_seen(), 3u) << "the withdrawn face never reached the engine";
  EXPECT_EQ(taconite::gst::shared_engine_stats(*shared_engine()).peak_concurrent, 2u);
}

// The property is bounded: GLib refuses 0 and 17 (with a warning) and keeps the valid value.
TEST(SharedEngineSessions, PropertyIsBoundedTo1To16) {
  GstElement* element = gst_element_factory_make("taconiteadaface", nullptr);
  ASSERT_NE(element, nullptr);
  GParamSpecInt* spec =
      G_PARAM_SPEC_INT(g_object_class_find_property(G_OBJECT_GET_CLASS(element), "sessions"));
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->minimum, 1);
  EXPECT_EQ(spec->maximum, taconite::gst::kMaxEngineSessions);
  EXPECT_EQ(spec->default_value, 1);
  gst_util_set_object_arg(G_OBJECT(element), "sessions", "3");
  for (const char* bad : {"0", "17", "-1"}) gst_util_set_object_arg(G_OBJECT(element), "sessions", bad);
  gint sessions = 0;
  g_object_get(element, "sessions", &sessions, nullptr);
  EXPECT_EQ(sessions, 3);
  gst_object_unref(element);
}

template <typename Fn>
bool returns_within_guard(Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::steady_clock::now() - start < kHangGuard;
}

class SharedEngineCancelTest : public SharedEngineTest {
 protected:
  std::vector<GstHarness*> slow_batching_streams() {
    for (int i = 0; i < 2; ++i) {
      GstHarness* h = adaface_harness({{"bundle", "fake"}, {"input-mode", "crops"}, {"batch-size", "2"},
                                       {"batch-timeout", "3000000"}});
      gst_harness_set_src_caps_str(h, kRgbCaps);
      harnesses.push_back(h);
    }
    return harnesses;
  }
};

TEST_F(SharedEngineCancelTest, FlushWithAQueuedSharedRequestReturnsPromptlyAndTheStreamResumes) {
  auto hs = slow_batching_streams();
  ASSERT_EQ(gst_harness_push(hs[0], frame(0, 0)), GST_FLOW_OK);
  wait_for_queued(1);  // stream 0 waits for stream 1's faces
  EXPECT_TRUE(returns_within_guard([&] {
    ASSERT_TRUE(gst_harness_push_event(hs[0], gst_event_new_flush_start()));
    ASSERT_TRUE(gst_harness_push_event(hs[0], gst_event_new_flush_stop(TRUE)));
  }));
  // FLUSH_STOP resumed the client: the stream's next frame is embedded, not refused as cancelled.
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  ASSERT_TRUE(gst_harness_push_event(hs[0], gst_event_new_segment(&segment)));
  ASSERT_EQ(gst_harness_push(hs[0], frame(0, 1)), GST_FLOW_OK);
  ASSERT_EQ(gst_harness_push(hs[1], frame(1, 1)), GST_FLOW_OK);
  for (int s = 0; s < 2; ++s) {
    GstBuffer* out = gst_harness_pull(hs[s]);
    ASSERT_NE(out, nullptr);
    expect_own_embedding(out, s, 1);
    gst_buffer_unref(out);
  }
}

TEST_F(SharedEngineCancelTest, PausedToReadyWithAQueuedSharedRequestReturnsPromptly) {
  auto hs = slow_batching_streams();
  ASSERT_EQ(gst_harness_push(hs[0], frame(0, 0)), GST_FLOW_OK);
  wait_for_queued(1);
  EXPECT_TRUE(returns_within_guard(
      [&] { EXPECT_EQ(gst_element_set_state(hs[0]->element, GST_STATE_READY), GST_STATE_CHANGE_SUCCESS); }));
  EXPECT_EQ(engine->faces_seen(), 0u) << "the withdrawn face never reached the engine";
}

/* ------------------------------------------------------------------------------------------ */
/* The SharedEngine API with a scripted engine                                                 */

using taconite::gst::EngineClient;
using taconite::gst::EngineRequest;

// Embeds a face as {its first value}; a closed gate holds calls; `fail` may fail a call (returns
// an error message) or throw.
struct Script {
  std::mutex lock;
  std::condition_variable changed;
  bool gate_open = true;
  int waiting = 0;
  std::vector<std::size_t> calls;  // faces per call
  std::function<std::string(std::span<const taconite::FaceChw>, std::size_t call)> fail;

  void set_gate(bool open) {
    std::lock_guard<std::mutex> guard(lock);
    gate_open = open;
    changed.notify_all();
  }
  void wait_for_waiting(int n) {
    std::unique_lock<std::mutex> guard(lock);
    changed.wait(guard, [&] { return waiting >= n; });
  }
};

class ScriptedEngine final : public EngineClient {
 public:
  ScriptedEngine(std::shared_ptr<Script> script, std::string backend) : script_(std::move(script)) {
    info_.backend = std::move(backend);
    info_.embed_dim = 1;
  }
  const taconite::gst::EngineInfo& info() const override { return info_; }
  taconite::Result<std::vector<taconite::Embedding>> embed(std::span<const taconite::FaceChw> faces) override {
    std::unique_lock<std::mutex> guard(script_->lock);
    ++script_->waiting;
    script_->changed.notify_all();
    script_->changed.wait(guard, [&] { return script_->gate_open; });
    --script_->waiting;
    const std::size_t call = script_->calls.size();
    script_->calls.push_back(faces.size());
    if (script_->fail)
      if (std::string message = script_->fail(faces, call); !message.empty())
        return taconite::Error{taconite::ErrorKind::Device, message};
    std::vector<taconite::Embedding> out;
    for (const taconite::FaceChw& face : faces) out.push_back({face.data[0]});
    return out;
  }

 private:
  std::shared_ptr<Script> script_;
  taconite::gst::EngineInfo info_;
};

bool has_face(std::span<const taconite::FaceChw> faces, float value) {
  return std::any_of(faces.begin(), faces.end(), [&](const taconite::FaceChw& f) { return f.data[0] == value; });
}

// One face whose embedding is {value}.
struct OneFace {
  explicit OneFace(float value) : data{value}, face{{data.data(), 1}, 1, 1, 1} {}
  OneFace(const OneFace&) = delete;  // `face` points into `data`
  std::array<float, 1> data;
  taconite::FaceChw face;
  std::span<const taconite::FaceChw> span() const { return {&face, 1}; }
};

class ScriptedSharedEngineTest : public ::testing::Test {
 protected:
  std::shared_ptr<Script> script = std::make_shared<Script>();
  std::shared_ptr<taconite::gst::SharedEngine> engine =
      taconite::gst::make_shared_engine(std::make_unique<ScriptedEngine>(script, "scripted"));

  std::unique_ptr<EngineClient> client(unsigned max_faces, std::chrono::microseconds timeout) {
    auto c = taconite::gst::make_shared_client(engine);
    c->set_batching({max_faces, timeout});
    return c;
  }

  // Client 0's face 0 occupies the engine while clients 1 and 2 queue faces 1 and 2, so the
  // next engine call is the batch {1, 2}. Returns the three results.
  std::vector<taconite::Result<std::vector<taconite::Embedding>>> batch_behind_a_busy_engine() {
    std::vector<std::unique_ptr<EngineClient>> clients;
    for (int i = 0; i < 3; ++i) clients.push_back(client(4, std::chrono::microseconds(0)));
    const OneFace faces[3] = {OneFace(0), OneFace(1), OneFace(2)};
    script->set_gate(false);
    std::vector<std::future<taconite::Result<std::vector<taconite::Embedding>>>> results;
    results.push_back(std::async(std::launch::async, [&] { return clients[0]->embed(faces[0].span()); }));
    script->wait_for_waiting(1);
    for (int i = 1; i < 3; ++i)
      results.push_back(std::async(std::launch::async, [&, i] { return clients[i]->embed(faces[i].span()); }));
    while (taconite::gst::shared_engine_queued(*engine) < 2) std::this_thread::yield();
    script->set_gate(true);
    std::vector<taconite::Result<std::vector<taconite::Embedding>>> out;
    for (auto& r : results) out.push_back(r.get());
    return out;
  }
};

void wait_for_queued_in(const taconite::gst::SharedEngine& engine, std::size_t n) {
  while (taconite::gst::shared_engine_queued(engine) < n) std::this_thread::yield();
}

void expect_embedding(const taconite::Result<std::vector<taconite::Embedding>>& result, float value) {
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_EQ(result.value().size(), 1u);
  EXPECT_EQ(result.value()[0], taconite::Embedding{value});
}

TEST_F(ScriptedSharedEngineTest, CancelIsStickyUntilResume) {
  auto mine = client(2, std::chrono::seconds(3));
  auto other = client(2, std::chrono::seconds(3));  // attached, never submits: a submit would wait for it
  const OneFace face(7);
  mine->cancel();  // e.g. FLUSH_START between the element popping a buffer and submitting it
  auto cancelled = std::async(std::launch::async, [&] { return mine->embed(face.span()); });
  ASSERT_EQ(cancelled.wait_for(kHangGuard), std::future_status::ready) << "a submit after cancel() must not wait";
  const auto result = cancelled.get();
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("cancelled"), std::string::npos) << result.error().message;
  EXPECT_TRUE(script->calls.empty());

  mine->resume();
  mine->set_batching({1, std::chrono::microseconds(0)});
  expect_embedding(mine->embed(face.span()), 7);
}

TEST_F(ScriptedSharedEngineTest, AFailingBatchIsRetriedOneRequestAtATime) {
  script->fail = [](std::span<const taconite::FaceChw> faces, std::size_t) {
    return has_face(faces, 2) ? std::string("device rejects face 2") : std::string();
  };
  const auto results = batch_behind_a_busy_engine();
  expect_embedding(results[0], 0);
  expect_embedding(results[1], 1);
  ASSERT_FALSE(results[2].ok()) << "only the request that really fails gets the error";
  EXPECT_EQ(results[2].error().message, "device rejects face 2");
  EXPECT_EQ(script->calls, (std::vector<std::size_t>{1, 2, 1, 1}));
  EXPECT_EQ(taconite::gst::shared_engine_stats(*engine).retries, 1u);
}

TEST_F(ScriptedSharedEngineTest, ATransientFailureOfABatchFailsNoStream) {
  script->fail = [](std::span<const taconite::FaceChw>, std::size_t call) {
    return call == 1 ? std::string("transient device error") : std::string();
  };
  const auto results = batch_behind_a_busy_engine();
  for (int i = 0; i < 3; ++i) expect_embedding(results[i], static_cast<float>(i));
}

TEST_F(ScriptedSharedEngineTest, AnEngineExceptionFailsItsRequestAndTheWorkerKeepsServing) {
  script->fail = [](std::span<const taconite::FaceChw> faces, std::size_t) -> std::string {
    if (has_face(faces, 2)) throw std::bad_alloc();
    return {};
  };
  const auto results = batch_behind_a_busy_engine();
  expect_embedding(results[0], 0);
  expect_embedding(results[1], 1);
  ASSERT_FALSE(results[2].ok());
  EXPECT_NE(results[2].error().message.find("exception"), std::string::npos) << results[2].error().message;
  EXPECT_NE(results[2].error().message.find("bad_alloc"), std::string::npos) << results[2].error().message;
  const OneFace next(3);
  expect_embedding(client(1, std::chrono::microseconds(0))->embed(next.span()), 3);
}

TEST_F(ScriptedSharedEngineTest, AStreamThatStoppedSubmittingCostsTheOthersOneTimeoutNotOnePerFrame) {
  auto streaming = client(2, std::chrono::milliseconds(100));
  auto idle = client(2, std::chrono::milliseconds(100));  // e.g. at EOS: attached, never submits again
  for (int i = 0; i < 5; ++i) {
    const OneFace face(static_cast<float>(i));
    expect_embedding(streaming->embed(face.span()), static_cast<float>(i));
  }
  EXPECT_EQ(taconite::gst::shared_engine_stats(*engine).timeouts, 1u)
      << "the first frame waits for the idle stream, the next ones do not";

  // The idle stream submits again, alone: its own frame waits for the streaming one.
  const OneFace face(9);
  expect_embedding(idle->embed(face.span()), 9);
  EXPECT_EQ(taconite::gst::shared_engine_stats(*engine).timeouts, 2u) << "its own frame waited for the streaming one";
}

// Two elements in series on one engine (a live source: the upstream one's next frame comes after
// the downstream one finished this one): each submits only after the other's request is done, so
// neither can ever join the other's batch. Each costs one timeout, not one per frame.
TEST_F(ScriptedSharedEngineTest, ElementsInSeriesCostOneTimeoutEachNotOnePerFrame) {
  auto upstream = client(2, std::chrono::milliseconds(100));
  auto downstream = client(2, std::chrono::milliseconds(100));
  for (int i = 0; i < 6; ++i) {
    const OneFace face(static_cast<float>(i));
    expect_embedding(upstream->embed(face.span()), static_cast<float>(i));
    expect_embedding(downstream->embed(face.span()), static_cast<float>(i));
  }
  EXPECT_EQ(taconite::gst::shared_engine_stats(*engine).timeouts, 2u)
      << "the first frame of each waits for the other; later ones wait for nobody";
  EXPECT_EQ(taconite::gst::shared_engine_stats(*engine).calls, 12u);


  // A stream whose request meets another stream's queued request runs alongside the others: it
  // is waited for again. A third stream holds the engine while both queue a face.
  {
    auto holder = client(1, std::chrono::microseconds(0));
    const OneFace held(30), a(31), b(32);
    script->set_gate(false);
    auto first = std::async(std::launch::async, [&] { return holder->embed(held.span()); });
    script->wait_for_waiting(1);
    auto second = std::async(std::launch::async, [&] { return upstream->embed(a.span()); });
    wait_for_queued_in(*engine, 1);
    auto third = std::async(std::launch::async, [&] { return downstream->embed(b.span()); });
    wait_for_queued_in(*engine, 2);
    script->set_gate(true);
    expect_embedding(first.get(), 30);
    expect_embedding(second.get(), 31);
    expect_embedding(third.get(), 32);
  }  // the holder detaches
  const OneFace last(40);
  expect_embedding(upstream->embed(last.span()), 40);
  EXPECT_EQ(taconite::gst::shared_engine_stats(*engine).timeouts, 3u)
      << "the downstream stream met a queued request, so it is expected (and waited for) again";
}

TEST_F(ScriptedSharedEngineTest, AFlushingStreamIsNotWaitedFor) {
  auto streaming = client(2, std::chrono::seconds(3));
  auto flushing = client(2, std::chrono::seconds(3));
  flushing->cancel();
  const OneFace face(4);
  auto result = std::async(std::launch::async, [&] { return streaming->embed(face.span()); });
  ASSERT_EQ(result.wait_for(kHangGuard), std::future_status::ready);
  expect_embedding(result.get(), 4);
  EXPECT_EQ(taconite::gst::shared_engine_stats(*engine).timeouts, 0u);
}

// Each call waits, at most `patience`, until another call is inside too (a rendezvous of two
// sessions); records the most calls inside at once. Every session shares the one rendezvous.
struct Rendezvous {
  explicit Rendezvous(std::chrono::milliseconds p) : patience(p) {}
  std::mutex lock;
  std::condition_variable changed;
  const std::chrono::milliseconds patience;
  int inside = 0;
  int peak = 0;
  int met = 0;  // calls that saw another one inside before their patience ran out
};

class RendezvousEngine final : public EngineClient {
 public:
  explicit RendezvousEngine(std::shared_ptr<Rendezvous> rendezvous) : rendezvous_(std::move(rendezvous)) {
    info_.backend = "rendezvous";
    info_.embed_dim = 1;
  }
  const taconite::gst::EngineInfo& info() const override { return info_; }
  taconite::Result<std::unique_ptr<EngineClient>> another_session() const override {
    return std::unique_ptr<EngineClient>(std::make_unique<RendezvousEngine>(rendezvous_));
  }
  taconite::Result<std::vector<taconite::Embedding>> embed(std::span<const taconite::FaceChw> faces) override {
    std::unique_lock<std::mutex> guard(rendezvous_->lock);
    rendezvous_->peak = std::max(rendezvous_->peak, ++rendezvous_->inside);
    rendezvous_->changed.notify_all();
    if (rendezvous_->changed.wait_for(guard, rendezvous_->patience, [&] { return rendezvous_->peak >= 2; }))
      ++rendezvous_->met;
    --rendezvous_->inside;
    std::vector<taconite::Embedding> out;
    for (const taconite::FaceChw& face : faces) out.push_back({face.data[0]});
    return out;
  }

 private:
  std::shared_ptr<Rendezvous> rendezvous_;
  taconite::gst::EngineInfo info_;
};

// Two streams submit one face each at once; returns the rendezvous after both got their own result.
std::shared_ptr<Rendezvous> two_streams_on(int sessions, std::chrono::milliseconds patience,
                                           taconite::gst::SharedEngineStats* stats) {
  auto rendezvous = std::make_shared<Rendezvous>(patience);
  auto engine = taconite::gst::make_shared_engine(std::make_unique<RendezvousEngine>(rendezvous), 0, sessions);
  std::vector<std::unique_ptr<EngineClient>> clients;
  for (int i = 0; i < 2; ++i) {
    clients.push_back(taconite::gst::make_shared_client(engine));
    clients.back()->set_batching({1, std::chrono::microseconds(0)});
  }
  const OneFace faces[2] = {OneFace(10), OneFace(11)};
  std::vector<std::future<taconite::Result<std::vector<taconite::Embedding>>>> results;
  for (int i = 0; i < 2; ++i)
    results.push_back(std::async(std::launch::async, [&, i] { return clients[i]->embed(faces[i].span()); }));
  for (int i = 0; i < 2; ++i) expect_embedding(results[i].get(), static_cast<float>(10 + i));
  *stats = taconite::gst::shared_engine_stats(*engine);
  return rendezvous;
}

TEST(SharedEngineSessions, TwoSessionsRunTwoStreamsCallsAtOnce) {
  taconite::gst::SharedEngineStats stats;
  const auto rendezvous = two_streams_on(2, std::chrono::seconds(30), &stats);  // 30 s: a hang guard
  EXPECT_EQ(rendezvous->peak, 2);
  EXPECT_EQ(rendezvous->met, 2) << "each call must have met the other inside the engine";
  EXPECT_EQ(stats.sessions, 2u);
  EXPECT_EQ(stats.peak_concurrent, 2u);
  EXPECT_EQ(stats.calls, 2u);
}

TEST(SharedEngineSessions, OneSessionNeverHasTwoCallsInside) {
  taconite::gst::SharedEngineStats stats;
  const auto rendezvous = two_streams_on(1, std::chrono::milliseconds(300), &stats);
  EXPECT_EQ(rendezvous->peak, 1);
  EXPECT_EQ(rendezvous->met, 0);
  EXPECT_EQ(stats.sessions, 1u);
  EXPECT_EQ(stats.peak_concurrent, 1u);
}

TEST(SharedEngineSessions, AnEngineWithoutMoreSessionsIsServedByOne) {
  auto engine =
      taconite::gst::make_shared_engine(std::make_unique<ScriptedEngine>(std::make_shared<Script>(), "x"), 0, 4);
  EXPECT_EQ(taconite::gst::shared_engine_stats(*engine).sessions, 1u);
  EXPECT_EQ(taconite::gst::shared_engine_sessions(*engine), 4) << "as requested, for the sharing note";
  auto client = taconite::gst::make_shared_client(engine);
  const OneFace face(5);
  expect_embedding(client->embed(face.span()), 5);
}

// Stream A's face is in one session; stream B (batch of 2, 3 s timeout) must not wait for A to
// submit again: A cannot before its result is back. B's face goes to the other session at once.
TEST(SharedEngineSessions, AStreamWhoseRequestIsRunningIsNotWaitedFor) {
  auto state = install_fake_engine();
  EngineRequest request;
  request.bundle = "fake";
  request.sessions = 2;
  auto a = taconite::gst::open_engine_client(request), b = taconite::gst::open_engine_client(request);
  ASSERT_TRUE(a.ok() && b.ok());
  a.value()->set_batching({1, std::chrono::microseconds(0)});
  b.value()->set_batching({2, std::chrono::seconds(3)});
  const std::vector<float> chw_a = expected_chw(112, 112, pixels(0, 0)), chw_b = expected_chw(112, 112, pixels(1, 0));
  const taconite::FaceChw face_a{chw_a, 3, 112, 112}, face_b{chw_b, 3, 112, 112};
  state->close_gate();
  auto result_a = std::async(std::launch::async, [&] { return a.value()->embed({&face_a, 1}); });
  state->wait_for_waiting_calls(1);
  auto result_b = std::async(std::launch::async, [&] { return b.value()->embed({&face_b, 1}); });
  state->wait_for_waiting_calls(2);
  EXPECT_EQ(taconite::gst::shared_engine_stats(*taconite::gst::find_shared_engine(request)).timeouts, 0u)
      << "B's batch waited for A";
  state->open_gate();
  ASSERT_TRUE(result_a.get().ok());
  ASSERT_TRUE(result_b.get().ok());
  uninstall_fake_engine();
}

/* ------------------------------------------------------------------------------------------ */
/* The registry: canonical bundle paths, resolved backends, threads, per-key loading           */

EngineRequest request_for(const std::filesystem::path& bundle, const std::string& backend = "auto", int threads = 0,
                          int sessions = 1) {
  EngineRequest request;
  request.bundle = bundle.string();
  request.backend = backend;
  request.threads = threads;
  request.sessions = sessions;
  return request;
}

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // `auto` resolves to "cpu"; every other backend to itself. Opens are counted per bundle.
    taconite::gst::set_engine_opener([this](const EngineRequest& request) {
      {
        std::unique_lock<std::mutex> guard(script->lock);
        ++opened[std::filesystem::path(request.bundle).filename().string()];
        script->changed.notify_all();
        script->changed.wait(guard, [&] { return !blocked || request.bundle.find(*blocked) == std::string::npos; });
      }
      return taconite::Result<std::unique_ptr<EngineClient>>(std::unique_ptr<EngineClient>(
          std::make_unique<ScriptedEngine>(script, request.backend == "auto" ? "cpu" : request.backend)));
    });
  }
  void TearDown() override {
    {
      std::lock_guard<std::mutex> guard(script->lock);
      blocked.reset();
      script->changed.notify_all();
    }
    taconite::gst::set_engine_opener({});
    for (const auto& dir : dirs) std::filesystem::remove_all(dir);
  }
  // A fresh directory standing for a bundle (the registry resolves bundle paths; the opener here
  // does not read them).
  std::filesystem::path bundle_dir(const std::string& name) {
    dirs.push_back(std::filesystem::temp_directory_path() / ("taconite-shared-" + name + "-" + std::to_string(::getpid())));
    std::filesystem::create_directories(dirs.back());
    return dirs.back();
  }
  int opens(const std::string& name) {
    std::lock_guard<std::mutex> guard(script->lock);
    return opened[name];
  }

  std::shared_ptr<Script> script = std::make_shared<Script>();
  std::map<std::string, int> opened;
  std::optional<std::string> blocked;  // loads of bundles whose path contains this wait
  std::vector<std::filesystem::path> dirs;
};

std::unique_ptr<EngineClient> must_open(const EngineRequest& request) {
  auto client = taconite::gst::open_engine_client(request);
  EXPECT_TRUE(client.ok()) << client.error().message;
  return client ? std::move(client).value() : nullptr;
}

TEST_F(RegistryTest, SpellingsOfOneBundleShareOneEngine) {
  const std::filesystem::path dir = bundle_dir("spellings");
  auto plain = must_open(request_for(dir));
  auto slash = must_open(request_for(dir.string() + "/"));
  auto dot = must_open(request_for(dir.string() + "/./"));
  auto dotdot = must_open(request_for(dir / ".." / dir.filename()));
  ASSERT_TRUE(plain && slash && dot && dotdot);
  EXPECT_EQ(opens(dir.filename().string()), 1);
}

TEST_F(RegistryTest, AnUnresolvableBundlePathIsAnIoErrorNamingIt) {
  auto client = taconite::gst::open_engine_client(request_for("/nonexistent/taconite/bundle"));
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.error().kind, taconite::ErrorKind::Io);
  EXPECT_NE(client.error().message.find("/nonexistent/taconite/bundle"), std::string::npos) << client.error().message;
}

TEST_F(RegistryTest, AutoSharesTheEngineOfTheBackendItResolvedTo) {
  const std::filesystem::path dir = bundle_dir("auto-first");
  auto automatic = must_open(request_for(dir, "auto"));
  auto explicit_cpu = must_open(request_for(dir, "cpu"));
  ASSERT_TRUE(automatic && explicit_cpu);
  EXPECT_EQ(automatic->info().backend, "cpu");
  EXPECT_EQ(opens(dir.filename().string()), 1) << "one engine for auto and the cpu it resolved to";
  auto cpu_reference = must_open(request_for(dir, "cpu-reference"));
  EXPECT_EQ(opens(dir.filename().string()), 2) << "another backend is another engine";
}

TEST_F(RegistryTest, AutoReusesALiveEngineOfTheBackendAutoTriesFirst) {
  const std::filesystem::path dir = bundle_dir("explicit-first");
  const std::string first = taconite::compiled_backends().front();
  auto explicit_first = must_open(request_for(dir, first));
  auto automatic = must_open(request_for(dir, "auto"));
  ASSERT_TRUE(explicit_first && automatic);
  EXPECT_EQ(opens(dir.filename().string()), 1);
}

TEST_F(RegistryTest, ADifferentThreadCountThanTheLiveEngineGivesANote) {
  const std::filesystem::path dir = bundle_dir("threads");
  auto first = must_open(request_for(dir, "cpu", 2));
  auto same = must_open(request_for(dir, "cpu", 2));
  auto other = must_open(request_for(dir, "cpu", 3));
  ASSERT_TRUE(first && same && other);
  EXPECT_EQ(first->sharing_note(), "");
  EXPECT_EQ(same->sharing_note(), "");
  EXPECT_NE(other->sharing_note().find("threads=3"), std::string::npos) << other->sharing_note();
  EXPECT_NE(other->sharing_note().find("threads=2"), std::string::npos) << other->sharing_note();
}

TEST_F(RegistryTest, ADifferentSessionCountThanTheLiveEngineGivesANote) {
  const std::filesystem::path dir = bundle_dir("sessions");
  auto first = must_open(request_for(dir, "cpu", 0, 2));
  auto other = must_open(request_for(dir, "cpu", 0, 3));
  ASSERT_TRUE(first && other);
  EXPECT_EQ(first->sharing_note(), "");
  EXPECT_NE(other->sharing_note().find("sessions=3 is not used"), std::string::npos) << other->sharing_note();
  EXPECT_NE(other->sharing_note().find("sessions=2"), std::string::npos) << other->sharing_note();
  EXPECT_EQ(other->sharing_note().find("threads"), std::string::npos) << "the threads match";
}

TEST_F(RegistryTest, ASessionCountOutsideItsRangeIsAnInputError) {
  const std::filesystem::path dir = bundle_dir("bad-sessions");
  for (int sessions : {0, taconite::gst::kMaxEngineSessions + 1}) {
    auto client = taconite::gst::open_engine_client(request_for(dir, "cpu", 0, sessions));
    ASSERT_FALSE(client.ok());
    EXPECT_EQ(client.error().kind, taconite::ErrorKind::Input);
    EXPECT_NE(client.error().message.find("sessions=" + std::to_string(sessions)), std::string::npos)
        << client.error().message;
  }
  EXPECT_EQ(opens(dir.filename().string()), 0);
}

TEST_F(RegistryTest, ALoadOfOneBundleDoesNotHoldUpAnotherAndOneKeyLoadsOnce) {
  const std::filesystem::path a = bundle_dir("slow-a"), b = bundle_dir("fast-b");
  {
    std::lock_guard<std::mutex> guard(script->lock);
    blocked = "slow-a";
  }
  auto first_a = std::async(std::launch::async, [&] { return must_open(request_for(a)); });
  {
    std::unique_lock<std::mutex> guard(script->lock);
    script->changed.wait(guard, [&] { return opened[a.filename().string()] == 1; });  // A's load is in the opener
  }
  auto second_a = std::async(std::launch::async, [&] { return must_open(request_for(a)); });
  auto loaded_b = std::async(std::launch::async, [&] { return must_open(request_for(b)); });
  const bool b_loaded = loaded_b.wait_for(std::chrono::seconds(10)) == std::future_status::ready;  // hang guard
  {
    std::lock_guard<std::mutex> guard(script->lock);
    blocked.reset();
    script->changed.notify_all();
  }
  ASSERT_TRUE(b_loaded) << "bundle B's load waited for bundle A's";
  EXPECT_NE(loaded_b.get(), nullptr);
  auto client_a1 = first_a.get();
  auto client_a2 = second_a.get();
  ASSERT_TRUE(client_a1 && client_a2);
  EXPECT_EQ(opens(a.filename().string()), 1) << "the second request for A waited for the first load";
}

// The element posts the note as a GStreamer warning.
TEST(SharedEngineWarning, ElementWarnsWhenItsThreadsAreNotUsed) {
  install_fake_engine();
  GstElement* first = gst_element_factory_make("taconiteadaface", nullptr);
  GstElement* second = gst_element_factory_make("taconiteadaface", nullptr);
  g_object_set(first, "bundle", "fake", "threads", 1, nullptr);
  g_object_set(second, "bundle", "fake", "threads", 2, nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(second, bus);
  ASSERT_NE(gst_element_set_state(first, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  ASSERT_NE(gst_element_set_state(second, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  GstMessage* warning = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING);
  ASSERT_NE(warning, nullptr);
  GError* error = nullptr;
  gst_message_parse_warning(warning, &error, nullptr);
  EXPECT_NE(std::string(error->message).find("threads=2"), std::string::npos) << error->message;
  g_error_free(error);
  gst_message_unref(warning);
  for (GstElement* e : {first, second}) gst_element_set_state(e, GST_STATE_NULL);
  gst_element_set_bus(second, nullptr);
  gst_object_unref(bus);
  gst_object_unref(first);
  gst_object_unref(second);
  uninstall_fake_engine();
}

/* ------------------------------------------------------------------------------------------ */
/* The real runtime: sessions of one Model                                                     */

// Embeds two faces per stream from two streams at once through shared-engine clients of `backend`
// with `sessions`; returns the embeddings by (stream, face) and checks that both clients used one
// engine of that many sessions.
std::vector<taconite::Embedding> embed_two_streams(const std::string& backend, int sessions) {
  EngineRequest request;
  request.bundle = test_bundle();
  request.backend = backend;
  request.threads = 1;
  request.sessions = sessions;
  std::vector<std::unique_ptr<EngineClient>> clients;
  for (int s = 0; s < 2; ++s) {
    auto client = taconite::gst::open_engine_client(request);
    EXPECT_TRUE(client.ok()) << client.error().message;
    if (!client) return {};
    clients.push_back(std::move(client).value());
    clients.back()->set_batching({1, std::chrono::microseconds(0)});
  }
  auto work = [&](int stream) {
    std::vector<taconite::Embedding> out;
    for (int i = 0; i < 2; ++i) {
      const std::vector<float> chw = expected_chw(112, 112, pixels(stream, i));
      const taconite::FaceChw face{chw, 3, 112, 112};
      auto e = clients[static_cast<std::size_t>(stream)]->embed({&face, 1});
      EXPECT_TRUE(e.ok()) << e.error().message;
      out.push_back(e ? e.value().front() : taconite::Embedding{});
    }
    return out;
  };
  auto first = std::async(std::launch::async, work, 0), second = std::async(std::launch::async, work, 1);
  std::vector<taconite::Embedding> all = first.get();
  for (auto& e : second.get()) all.push_back(std::move(e));
  const auto engine = taconite::gst::find_shared_engine(request);
  EXPECT_NE(engine, nullptr);
  if (engine) {
    const taconite::gst::SharedEngineStats stats = taconite::gst::shared_engine_stats(*engine);
    EXPECT_EQ(stats.sessions, static_cast<unsigned>(sessions));
    EXPECT_EQ(stats.faces, 4u) << "both clients' faces went through the one engine";
  }
  return all;
}

class SessionsOnTheRealEngineTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (test_bundle().empty()) GTEST_SKIP() << "TACONITE_TEST_BUNDLE not set (meson test sets it)";
    uninstall_fake_engine();
  }
};

// cpu-reference is deterministic per face: bit-identical; cpu (oneDNN) within 1e-4 cosine.
TEST_P(SessionsOnTheRealEngineTest, TwoSessionsGiveTheEmbeddingsOfOne) {
  const std::vector<taconite::Embedding> two = embed_two_streams(GetParam(), 2);
  const std::vector<taconite::Embedding> one = embed_two_streams(GetParam(), 1);
  ASSERT_EQ(two.size(), 4u);
  ASSERT_EQ(one.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(two[i].size(), 512u);
    if (GetParam() == "cpu-reference")
      EXPECT_EQ(two[i], one[i]) << "face " << i;
    else
      EXPECT_GE(taconite::cosine(two[i], one[i]), 0.9999) << "face " << i;
  }
  EXPECT_LT(taconite::cosine(two[0], two[2]), 0.9999) << "different faces give different embeddings";
}

std::vector<std::string> cpu_backends() {
  std::vector<std::string> backends{"cpu-reference"};
  if (test_backend() != "cpu-reference") backends.push_back(test_backend());
  return backends;
}

INSTANTIATE_TEST_SUITE_P(Backends, SessionsOnTheRealEngineTest, ::testing::ValuesIn(cpu_backends()), [](const auto& info) {
  return info.param == "cpu" ? std::string("cpu") : std::string("cpu_reference");
});

}  // namespace

// The Runner as a component sees it, with the real elements on two recordings of the astronaut
// photo: per camera Starting, Streaming, Stopped in that order; frames with their caps and face
// ROIs from the streaming threads; each track's new and end with epoch seconds; one on_stop after
// every event; a component that throws does not keep the others from their events; a reload tells
// the components the enabled cameras when they changed, between the stops and the starts.
// Skips (saying why) without the YuNet model, the astronaut photo or the test bundle.
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>

#include "runner.hpp"

namespace taconite::app {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

struct Recorded {
  std::mutex lock;
  std::map<std::string, std::vector<CameraState>> states;
  std::map<std::string, int> frames, frames_with_faces;
  std::map<std::string, int> widths;
  std::vector<TrackEvent> events;
  int stops = 0;
  std::size_t events_at_stop = 0;
};

class RecordingObserver : public PipelineObserver {
 public:
  explicit RecordingObserver(Recorded& r) : r_(r) {}
  void on_track_event(const TrackEvent& event) override {
    std::lock_guard<std::mutex> guard(r_.lock);
    r_.events.push_back(event);
  }
  void on_frame(const std::string& camera, GstBuffer* frame, const GstVideoInfo& info) override {
    const bool face = gst_buffer_get_video_region_of_interest_meta(frame) != nullptr;
    std::lock_guard<std::mutex> guard(r_.lock);
    ++r_.frames[camera];
    r_.frames_with_faces[camera] += face ? 1 : 0;
    r_.widths[camera] = GST_VIDEO_INFO_WIDTH(&info);
  }
  void on_camera_state(const std::string& camera, CameraState state, const std::string&) override {
    std::lock_guard<std::mutex> guard(r_.lock);
    r_.states[camera].push_back(state);
  }
  void on_stop() override {
    std::lock_guard<std::mutex> guard(r_.lock);
    ++r_.stops;
    r_.events_at_stop = r_.events.size();
  }

 private:
  Recorded& r_;
};

class ThrowingObserver : public PipelineObserver {
 public:
  void on_track_event(const TrackEvent&) override { throw std::runtime_error("component failure"); }
};

// A 3 s recording (10 fps, MJPEG in AVI) of the astronaut photo, written with GStreamer's own elements.
bool write_recording(const std::string& photo, const std::string& path) {
  const std::string description = "filesrc location=\"" + photo + "\" ! pngdec ! videoconvert ! videoscale ! "
                                  "video/x-raw,width=480,height=480 ! imagefreeze num-buffers=30 ! "
                                  "video/x-raw,framerate=10/1 ! jpegenc ! avimux ! filesink location=\"" + path + "\"";
  GstElement* pipeline = gst_parse_launch(description.c_str(), nullptr);
  if (!pipeline) return false;
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* end = gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND,
                                               static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  const bool ok = end && GST_MESSAGE_TYPE(end) == GST_MESSAGE_EOS;
  if (end) gst_message_unref(end);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  return ok;
}

TEST(Runner, ComponentsSeeEveryCameraFromStartToStop) {
  const std::string yunet = env("TACONITE_YUNET_MODEL"), bundle = env("TACONITE_TEST_BUNDLE"),
                    photo = env("TACONITE_TEST_ASTRONAUT");
  if (!std::filesystem::exists(yunet)) GTEST_SKIP() << "the YuNet model is absent: " << yunet;
  if (!std::filesystem::exists(photo)) GTEST_SKIP() << "the astronaut photo (python3-skimage) is absent";
  if (!std::filesystem::exists(bundle + "/manifest.txt")) GTEST_SKIP() << "no test bundle at " << bundle;
  gst_init(nullptr, nullptr);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "taconite-runner-test";
  std::filesystem::create_directories(dir);
  const std::string video = (dir / "astronaut-3s.avi").string();
  ASSERT_TRUE(write_recording(photo, video));

  Config config;
  config.file = "runner_test";
  config.model = bundle;
  config.detector = yunet;
  for (const char* name : {"door1", "door2"}) {
    CameraConfig camera;
    camera.name = name;
    camera.uri = "file://" + video;
    config.cameras.push_back(camera);
  }
  Recorded recorded;
  std::vector<std::unique_ptr<PipelineObserver>> observers;
  observers.push_back(std::make_unique<ThrowingObserver>());
  observers.push_back(std::make_unique<RecordingObserver>(recorded));
  GMainLoop* loop = g_main_loop_new(nullptr, FALSE);
  const double started = static_cast<double>(g_get_real_time()) / 1e6;
  {
    Runner runner(config, std::move(observers), RunnerOptions{true}, loop);
    runner.start();
    // A guard against a hang: the recordings take about a second.
    const guint guard = g_timeout_add_seconds(60, [](gpointer l) -> gboolean {
      ADD_FAILURE() << "the recordings did not end within 60 s";
      g_main_loop_quit(static_cast<GMainLoop*>(l));
      return G_SOURCE_REMOVE;
    }, loop);
    if (runner.running_cameras() > 0) g_main_loop_run(loop);
    g_source_remove(guard);
    EXPECT_EQ(runner.exit_code(), 0);
  }
  g_main_loop_unref(loop);

  const std::vector<CameraState> expected = {CameraState::Starting, CameraState::Streaming, CameraState::Stopped};
  for (const char* name : {"door1", "door2"}) {
    EXPECT_EQ(recorded.states[name], expected) << name;
    EXPECT_EQ(recorded.frames[name], 30) << name << ": drop=none gives every frame of a recording";
    EXPECT_GT(recorded.frames_with_faces[name], 20) << name;
    EXPECT_EQ(recorded.widths[name], 480) << name;
    int news = 0, ends = 0;
    for (const TrackEvent& e : recorded.events) {
      if (e.camera != name) continue;
      news += e.kind == "new";
      ends += e.kind == "end";
      EXPECT_NEAR(e.epoch_s, started, 60) << e.document;
      if (e.kind == "end") {
        EXPECT_EQ(e.reason, "eos");
      }
    }
    EXPECT_GE(news, 1) << name;
    EXPECT_EQ(news, ends) << name << ": every track ends";
  }
  EXPECT_EQ(recorded.stops, 1);
  EXPECT_EQ(recorded.events_at_stop, recorded.events.size()) << "on_stop comes after every event";
  std::filesystem::remove_all(dir);
}

// What a reload tells the components, in order: the cameras (only when the enabled set changed) and
// the cameras' states.
class ReloadObserver : public PipelineObserver {
 public:
  explicit ReloadObserver(std::vector<std::string>& seen) : seen_(seen) {}
  void on_cameras_changed(const std::vector<std::string>& enabled) override {
    std::string line = "cameras:";
    for (const std::string& name : enabled) line += " " + name;
    seen_.push_back(line);
  }
  void on_camera_state(const std::string& camera, CameraState state, const std::string&) override {
    if (state == CameraState::Starting || state == CameraState::Stopped)
      seen_.push_back(camera + (state == CameraState::Starting ? " starting" : " stopped"));
  }

 private:
  std::vector<std::string>& seen_;
};

TEST(Runner, AReloadTellsTheComponentsWhichCamerasAreEnabled) {
  const std::string yunet = env("TACONITE_YUNET_MODEL"), bundle = env("TACONITE_TEST_BUNDLE"),
                    photo = env("TACONITE_TEST_ASTRONAUT");
  if (!std::filesystem::exists(yunet)) GTEST_SKIP() << "the YuNet model is absent: " << yunet;
  if (!std::filesystem::exists(photo)) GTEST_SKIP() << "the astronaut photo (python3-skimage) is absent";
  if (!std::filesystem::exists(bundle + "/manifest.txt")) GTEST_SKIP() << "no test bundle at " << bundle;
  gst_init(nullptr, nullptr);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "taconite-runner-reload-test";
  std::filesystem::create_directories(dir);
  const std::string video = (dir / "astronaut-3s.avi").string();
  ASSERT_TRUE(write_recording(photo, video));
  auto config_of = [&](std::vector<std::pair<const char*, bool>> cameras) {
    Config config;
    config.file = "runner_reload_test";
    config.model = bundle;
    config.detector = yunet;
    for (const auto& [name, enabled] : cameras) {
      CameraConfig camera;
      camera.name = name;
      camera.uri = "file://" + video;
      camera.enabled = enabled;
      config.cameras.push_back(camera);
    }
    return config;
  };
  std::vector<std::string> seen;
  {
    std::vector<std::unique_ptr<PipelineObserver>> observers;
    observers.push_back(std::make_unique<ReloadObserver>(seen));
    Runner runner(config_of({{"door1", true}}), std::move(observers), RunnerOptions{}, nullptr);
    runner.start();
    runner.reload(config_of({{"door1", true}, {"door2", true}}));  // door2 added
    runner.reload(config_of({{"door1", true}, {"door2", true}}));  // nothing changed: not told
    runner.reload(config_of({{"door1", false}, {"door2", true}}));  // door1 disabled
    runner.reload(config_of({{"door2", true}}));                   // door1 removed: the same enabled set
  }
  const std::vector<std::string> expected = {"door1 starting",   "cameras: door1 door2", "door2 starting",
                                             "door1 stopped",    "cameras: door2",       "door2 stopped"};
  EXPECT_EQ(seen, expected);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace taconite::app

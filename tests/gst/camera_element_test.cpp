// taconitecamera as an element, without a network: a recording (file://) through drop=none and
// drop=latest with a slow consumer, settings refused before anything opens (each error naming the
// camera), and a live source that cannot open (a missing V4L2 device) retried as configured, then
// given up with an error. The server tests (RTSP, HTTP) are tests/camera/camera_servers_test.py.
#include <glib/gstdio.h>
#include <unistd.h>
#include <gst/gst.h>
#include <gst/taconite/gsttaconitecamera.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gst_test_support.hpp"

namespace {

constexpr int kClipFrames = 40;
constexpr GstClockTime kBusGuard = 30 * GST_SECOND;  // hang guard, not a timing assertion

// A 40-frame MJPEG AVI made with real elements, shared by the tests (removed at exit).
class CameraElementTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    gchar* dir = g_dir_make_tmp("taconite-camera-XXXXXX", nullptr);
    dir_ = dir;
    g_free(dir);
    clip_ = dir_ + "/clip.avi";
    const std::string launch = "videotestsrc num-buffers=" + std::to_string(kClipFrames) +
                               " ! video/x-raw,format=I420,width=160,height=120,framerate=15/1 ! jpegenc ! avimux ! "
                               "filesink location=" +
                               clip_;
    GstElement* writer = gst_parse_launch(launch.c_str(), nullptr);
    ASSERT_NE(writer, nullptr);
    gst_element_set_state(writer, GST_STATE_PLAYING);
    GstBus* bus = gst_element_get_bus(writer);
    GstMessage* done =
        gst_bus_timed_pop_filtered(bus, kBusGuard, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    ASSERT_NE(done, nullptr);
    EXPECT_EQ(GST_MESSAGE_TYPE(done), GST_MESSAGE_EOS);
    gst_message_unref(done);
    gst_object_unref(bus);
    gst_element_set_state(writer, GST_STATE_NULL);
    gst_object_unref(writer);
  }
  static void TearDownTestSuite() {
    g_remove(clip_.c_str());
    g_rmdir(dir_.c_str());
  }
  static std::string clip_uri() { return "file://" + clip_; }

  static inline std::string dir_, clip_;
};

// What a pipeline "taconitecamera name=camera ... ! ... fakesink name=sink" delivered until EOS.
struct Delivered {
  std::vector<GstClockTime> pts;
  bool eos = false;
  std::string error;
  guint64 frames = 0, dropped = 0, skipped = 0;
  std::string state;
};

void count_buffer(GstElement*, GstBuffer* buffer, GstPad*, gpointer pts) {
  static_cast<std::vector<GstClockTime>*>(pts)->push_back(GST_BUFFER_PTS(buffer));
}

Delivered run_to_the_end(const std::string& launch) {
  Delivered out;
  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launch(launch.c_str(), &error);
  if (!pipeline) {
    out.error = error ? error->message : "no pipeline";
    g_clear_error(&error);
    return out;
  }
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  g_object_set(sink, "signal-handoffs", TRUE, nullptr);
  g_signal_connect(sink, "handoff", G_CALLBACK(count_buffer), &out.pts);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBus* bus = gst_element_get_bus(pipeline);
  if (GstMessage* m = gst_bus_timed_pop_filtered(bus, kBusGuard,
                                                 static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR))) {
    out.eos = GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS;
    if (!out.eos) {
      GError* e = nullptr;
      gst_message_parse_error(m, &e, nullptr);
      out.error = e->message;
      g_error_free(e);
    }
    gst_message_unref(m);
  }
  GstElement* camera = gst_bin_get_by_name(GST_BIN(pipeline), "camera");
  gchar* state = nullptr;
  g_object_get(camera, "frames", &out.frames, "frames-dropped", &out.dropped, "frames-skipped", &out.skipped, "state",
               &state, nullptr);
  out.state = state ? state : "";
  g_free(state);
  gst_object_unref(camera);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return out;
}

TEST_F(CameraElementTest, ARecordingWithDropNoneDeliversEveryFrameInOrderThenEos) {
  // identity sleeps 20 ms per frame: the source must wait for it, not drop.
  const Delivered d = run_to_the_end("taconitecamera name=camera drop=none uri=" + clip_uri() +
                                     " ! identity sleep-time=20000 ! fakesink name=sink sync=false");
  EXPECT_TRUE(d.eos) << d.error;
  ASSERT_EQ(d.pts.size(), static_cast<std::size_t>(kClipFrames));
  for (int i = 0; i < kClipFrames; ++i)  // the recording's own timestamps: frame i at i/15 s
    EXPECT_NEAR(static_cast<double>(d.pts[i]), i * GST_SECOND / 15.0, 1e6) << "frame " << i;
  EXPECT_EQ(d.frames, static_cast<guint64>(kClipFrames));
  EXPECT_EQ(d.dropped, 0u);
  EXPECT_EQ(d.state, "ended");
}

TEST_F(CameraElementTest, MaxRateSkipsFramesByTheRecordingsOwnTimestampsAndCountsThem) {
  // 15 frames/s capped at 5: every third frame, whatever the reading speed (drop=none: nothing dropped).
  const Delivered d = run_to_the_end("taconitecamera name=camera drop=none max-rate=5 uri=" + clip_uri() +
                                     " ! fakesink name=sink sync=false");
  EXPECT_TRUE(d.eos) << d.error;
  const std::size_t expected = (kClipFrames + 2) / 3;  // frames 0, 3, ..., 39
  ASSERT_EQ(d.pts.size(), expected);
  for (std::size_t k = 0; k < d.pts.size(); ++k)
    EXPECT_NEAR(static_cast<double>(d.pts[k]), 3.0 * k * GST_SECOND / 15.0, 1e6) << "frame " << 3 * k;
  EXPECT_EQ(d.frames, static_cast<guint64>(kClipFrames));
  EXPECT_EQ(d.skipped, static_cast<guint64>(kClipFrames) - expected);
  EXPECT_EQ(d.dropped, 0u);
  EXPECT_EQ(d.state, "ended");
}

TEST_F(CameraElementTest, DropLatestGivesASlowConsumerTheNewestFramesAndCountsTheRest) {
  const Delivered d = run_to_the_end("taconitecamera name=camera drop=latest uri=" + clip_uri() +
                                     " ! identity sleep-time=50000 ! fakesink name=sink sync=false");
  EXPECT_TRUE(d.eos) << d.error;
  EXPECT_EQ(d.frames, static_cast<guint64>(kClipFrames));
  EXPECT_GT(d.dropped, 0u);
  EXPECT_EQ(d.pts.size() + d.dropped, static_cast<std::size_t>(kClipFrames));
  for (std::size_t i = 1; i < d.pts.size(); ++i) EXPECT_GT(d.pts[i], d.pts[i - 1]);
  ASSERT_FALSE(d.pts.empty());
  EXPECT_NEAR(static_cast<double>(d.pts.back()), (kClipFrames - 1) * GST_SECOND / 15.0, 1e6)
      << "the newest frame, the recording's last, is delivered";
}

// gst-launch-1.0 -e's Ctrl-C: an EOS sent to the pipeline reaches the sink after the frames already
// out, and the recording's remaining frames are not sent.
TEST_F(CameraElementTest, AnEosSentToThePipelineEndsTheStream) {
  GstElement* pipeline = gst_parse_launch(("taconitecamera name=camera drop=none uri=" + clip_uri() +
                                           " ! identity sleep-time=50000 ! fakesink name=sink sync=false")
                                              .c_str(),
                                          nullptr);
  ASSERT_NE(pipeline, nullptr);
  std::vector<GstClockTime> pts;
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  g_object_set(sink, "signal-handoffs", TRUE, nullptr);
  g_signal_connect(sink, "handoff", G_CALLBACK(count_buffer), &pts);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* playing = gst_bus_timed_pop_filtered(bus, kBusGuard, GST_MESSAGE_ASYNC_DONE);  // prerolled
  ASSERT_NE(playing, nullptr);
  gst_message_unref(playing);
  ASSERT_TRUE(gst_element_send_event(pipeline, gst_event_new_eos()));
  GstMessage* done =
      gst_bus_timed_pop_filtered(bus, kBusGuard, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(GST_MESSAGE_TYPE(done), GST_MESSAGE_EOS);
  gst_message_unref(done);
  EXPECT_LT(pts.size(), static_cast<std::size_t>(kClipFrames)) << "the EOS came before the recording's end";
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
}

// Settings that cannot work fail the start with an error naming the camera and the property.
TEST_F(CameraElementTest, SettingsThatCannotWorkAreRefusedAtStartNamingTheCamera) {
  gchar* path = nullptr;
  const gint fd = g_file_open_tmp("taconite-camera-credentials-XXXXXX", &path, nullptr);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "viewer\nS3cret\n", 14), 14);
  close(fd);
  ASSERT_EQ(g_chmod(path, 0644), 0);
  struct Case {
    std::vector<std::pair<const char*, std::string>> properties;
    const char* says;
    const char* property;
  };
  const std::vector<Case> cases = {
      {{}, "no uri is set", "uri"},
      {{{"uri", "rtsp://admin:S3cret@127.0.0.1:1/cam"}}, "credentials-file", "uri"},
      {{{"uri", "gopher://127.0.0.1/cam"}}, "not supported", "uri"},
      {{{"uri", "file:///nonexistent/clip.avi"}}, "does not exist", "uri"},
      {{{"uri", "rtsp://127.0.0.1:1/cam"}, {"credentials-file", path}}, "chmod 600", "credentials-file"},
      {{{"uri", "rtsp://127.0.0.1:1/cam"}, {"stream", "door\n1"}}, "control character", "stream"},
      {{{"uri", "v4l2:///dev/video0"}, {"device", "/dev/video0"}}, "both uri and device are set", "device"},
      {{{"device", "video0"}}, "not a path under /dev", "device"},
      {{{"device", "/dev/video 0"}}, "whitespace", "device"},
  };
  for (const Case& c : cases) {
    GstElement* camera = gst_element_factory_make("taconitecamera", "door1");
    ASSERT_NE(camera, nullptr);
    for (const auto& [name, value] : c.properties) gst_util_set_object_arg(G_OBJECT(camera), name, value.c_str());
    const gsttest::StartFailure failure = gsttest::start_paused(camera);
    EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE) << c.says;
    EXPECT_EQ(failure.domain, GST_RESOURCE_ERROR) << c.says;
    EXPECT_EQ(failure.code, GST_RESOURCE_ERROR_SETTINGS) << c.says;
    EXPECT_NE(failure.message.find("Camera 'door1'"), std::string::npos) << failure.message;
    EXPECT_NE(failure.message.find(c.says), std::string::npos) << failure.message;
    EXPECT_NE(failure.debug.find(std::string("property ") + c.property), std::string::npos) << failure.debug;
    EXPECT_EQ(failure.message.find("S3cret"), std::string::npos) << failure.message;
  }
  g_remove(path);
  g_free(path);
}

// A live source that cannot open: one "lost" message with the error, max-retries more attempts,
// then an error naming the camera; downstream saw no EOS. The same whether the missing V4L2 device
// is named by uri or by the device property.
class CameraMissingDeviceTest : public CameraElementTest, public ::testing::WithParamInterface<const char*> {};

INSTANTIATE_TEST_SUITE_P(UriOrDevice, CameraMissingDeviceTest,
                         ::testing::Values("uri=v4l2:///dev/taconite-no-such-camera",
                                           "device=/dev/taconite-no-such-camera"));

TEST_P(CameraMissingDeviceTest, ALiveSourceThatCannotOpenIsRetriedAsConfiguredThenAnErrorNamingTheCamera) {
  GstElement* pipeline = gst_parse_launch(
      (std::string("taconitecamera name=camera stream=porch ") + GetParam() +
       " max-retries=2 retry-interval=0.2 ! fakesink name=sink")
          .c_str(),
      nullptr);
  ASSERT_NE(pipeline, nullptr);
  ASSERT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  GstBus* bus = gst_element_get_bus(pipeline);
  int lost = 0, back = 0, eos = 0;
  std::string error, lost_reason, lost_message;
  while (GstMessage* m = gst_bus_timed_pop_filtered(
             bus, kBusGuard, static_cast<GstMessageType>(GST_MESSAGE_ELEMENT | GST_MESSAGE_ERROR | GST_MESSAGE_EOS))) {
    const GstStructure* s = gst_message_get_structure(m);
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS) ++eos;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ELEMENT && gst_structure_has_name(s, GST_TACONITE_CAMERA_MESSAGE_NAME)) {
      EXPECT_STREQ(gst_structure_get_string(s, "stream"), "porch");
      const std::string state = gst_structure_get_string(s, "state");
      if (state == "lost") {
        ++lost;
        lost_reason = gst_structure_get_string(s, "reason");
        lost_message = gst_structure_get_string(s, "message");
      }
      if (state == "back") ++back;
    }
    const bool done = GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR;
    if (done) {
      GError* e = nullptr;
      gst_message_parse_error(m, &e, nullptr);
      error = e->message;
      g_error_free(e);
    }
    gst_message_unref(m);
    if (done) break;
  }
  EXPECT_EQ(lost, 1);
  EXPECT_EQ(back, 0);
  EXPECT_EQ(eos, 0);
  EXPECT_EQ(lost_reason, "error");
  EXPECT_FALSE(lost_message.empty());
  EXPECT_NE(error.find("Camera 'porch'"), std::string::npos) << error;
  EXPECT_NE(error.find("3 attempts in a row failed"), std::string::npos) << error;
  EXPECT_NE(error.find(lost_message), std::string::npos) << error;
  GstElement* camera = gst_bin_get_by_name(GST_BIN(pipeline), "camera");
  guint64 restarts = 0;
  gchar* state = nullptr;
  gchar* last_error = nullptr;
  g_object_get(camera, "restarts", &restarts, "state", &state, "last-error", &last_error, nullptr);
  EXPECT_EQ(restarts, 2u);
  EXPECT_STREQ(state, "failed");
  EXPECT_EQ(std::string(last_error), lost_message);
  g_free(state);
  g_free(last_error);
  gst_object_unref(camera);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
}

}  // namespace

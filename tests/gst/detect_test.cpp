// taconitedetect: YuNet on the astronaut photo in every format taconiteadaface takes, ROI ids and
// upstream ROIs, the detection interval, taconiteadaface aligning the detected face with no other
// element, and every kind of wrong model or setting refused at READY -> PAUSED. Tests that need the
// model (../shared/models/, never committed) skip, saying so, without it.
#include <glib/gstdio.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "face_frames.hpp"
#include "gst_test_support.hpp"
#include "roi_track_param.hpp"

namespace {

using gsttest::Pt;
using gsttest::roi_points;
using gsttest::rois_of;
using gsttest::video_caps;

std::string yunet_model() {
  const char* path = std::getenv("TACONITE_YUNET_MODEL");
  return path ? path : "";
}

GstHarness* detect_harness(const std::string& properties) {
  return gst_harness_new_parse(("taconitedetect model=\"" + yunet_model() + "\" " + properties).c_str());
}

class DetectAstronaut : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::is_regular_file(yunet_model()))
      GTEST_SKIP() << "the YuNet model is not at '" << yunet_model()
                   << "' (face_detection_yunet_2023mar.onnx from OpenCV Zoo, into ../shared/models)";
    rgb = gsttest::astronaut_rgb(&width, &height);
    if (!rgb) GTEST_SKIP() << "TACONITE_TEST_ASTRONAUT (python3-skimage's astronaut.png) is not readable";
  }
  void TearDown() override {
    if (rgb) gst_buffer_unref(rgb);
  }
  GstBuffer* rgb = nullptr;
  int width = 0, height = 0;
};

GQuark face_quark() { return g_quark_from_static_string("face"); }

double confidence_of(GstVideoRegionOfInterestMeta* roi, gboolean* fresh = nullptr) {
  GstStructure* s = gst_video_region_of_interest_meta_get_param(roi, "detection");
  double confidence = -1;
  if (s) gst_structure_get_double(s, "confidence", &confidence);
  if (s && fresh) gst_structure_get_boolean(s, "fresh", fresh);
  return confidence;
}

// The astronaut's one face where YuNet puts it (shared/models/README.md: OpenCV's own decoding),
// its landmarks within 10 % of the eye distance.
void expect_astronaut_face(GstBuffer* out) {
  const std::vector<GstVideoRegionOfInterestMeta*> rois = rois_of(out);
  ASSERT_EQ(rois.size(), 1u);
  EXPECT_EQ(rois[0]->roi_type, face_quark());
  EXPECT_GT(confidence_of(rois[0]), 0.8);
  const std::vector<Pt> five = roi_points(rois[0], "landmarks");
  ASSERT_EQ(five.size(), 5u);
  const Pt expected[5] = {{201, 105}, {245, 105}, {221, 127}, {204, 145}, {242, 145}};
  for (int i = 0; i < 5; ++i) {
    EXPECT_LT(std::hypot(five[i].x - expected[i].x, five[i].y - expected[i].y), 4.4) << "landmark " << i;
    EXPECT_GE(five[i].x, rois[0]->x);
    EXPECT_LE(five[i].x, rois[0]->x + rois[0]->w);
  }
}

TEST_F(DetectAstronaut, EveryFormatOfTaconiteadafaceFindsTheFaceAndItsLandmarks) {
  GstHarness* h = detect_harness("");
  for (const char* format : {"RGB", "BGR", "RGBx", "BGRx", "xRGB", "xBGR", "RGBA", "BGRA", "I420", "NV12"}) {
    SCOPED_TRACE(format);
    GstBuffer* in = std::string(format) == "RGB" ? gst_buffer_copy(rgb) : gsttest::convert_rgb(rgb, width, height, format);
    ASSERT_NE(in, nullptr);
    gst_harness_set_src_caps_str(h, video_caps(format, width, height).c_str());
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    ASSERT_NE(out, nullptr);
    expect_astronaut_face(out);
    gst_buffer_unref(out);
  }
  gst_harness_teardown(h);
}

TEST_F(DetectAstronaut, NewRoisTakeIdsNoOtherRoiHasAndUpstreamFacesAreNotDuplicated) {
  GstHarness* h = detect_harness("");
  gst_harness_set_src_caps_str(h, video_caps("RGB", width, height).c_str());
  // A person ROI with the largest id: the face gets a free id, not G_MAXINT again.
  GstBuffer* in = gst_buffer_copy(rgb);
  gst_buffer_add_video_region_of_interest_meta(in, "person", 0, 0, 100, 100)->id = G_MAXINT;
  gst_buffer_add_video_region_of_interest_meta(in, "person", 0, 0, 50, 50)->id = 1;
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  std::vector<GstVideoRegionOfInterestMeta*> rois = rois_of(out);
  ASSERT_EQ(rois.size(), 3u);
  EXPECT_EQ(rois[2]->roi_type, face_quark());
  EXPECT_NE(rois[2]->id, G_MAXINT);
  EXPECT_NE(rois[2]->id, 1);
  gst_buffer_unref(out);

  // An upstream face ROI on the same face (a facedetect box, no landmarks): kept, not repeated,
  // and given the landmarks.
  in = gst_buffer_copy(rgb);
  gst_buffer_add_video_region_of_interest_meta(in, "face", 170, 60, 100, 110);
  out = gst_harness_push_and_pull(h, in);
  rois = rois_of(out);
  ASSERT_EQ(rois.size(), 1u);
  EXPECT_EQ(rois[0]->x, 170u);
  EXPECT_EQ(roi_points(rois[0], "landmarks").size(), 5u);
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

TEST_F(DetectAstronaut, IntervalCarriesTheLastFacesMarkedNotFreshUntilAFlush) {
  GstHarness* h = detect_harness("interval=3");
  gst_harness_set_src_caps_str(h, video_caps("RGB", width, height).c_str());
  auto black = [&] { return gsttest::rgb_buffer(width, height, [](int, int) { return std::array<std::uint8_t, 3>{}; }); };
  std::vector<gboolean> fresh_flags;
  for (GstBuffer* in : {gst_buffer_copy(rgb), black(), black(), black()}) {
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    const std::vector<GstVideoRegionOfInterestMeta*> rois = rois_of(out);
    gboolean fresh = TRUE;
    if (!rois.empty()) confidence_of(rois[0], &fresh);
    fresh_flags.push_back(rois.empty() ? -1 : fresh);
    gst_buffer_unref(out);
  }
  // Detected on frame 0, carried on 1 and 2, detected again (nothing: black) on 3.
  EXPECT_EQ(fresh_flags, (std::vector<gboolean>{TRUE, FALSE, FALSE, -1}));
  gst_harness_teardown(h);
}

// Issue 29: lowering `interval` while playing applies from the next frame, not once the old
// countdown runs out.
TEST_F(DetectAstronaut, LoweringTheIntervalWhilePlayingDetectsOnTheNextFrame) {
  GstHarness* h = detect_harness("interval=1000");
  gst_harness_set_src_caps_str(h, video_caps("RGB", width, height).c_str());
  auto black = [&] { return gsttest::rgb_buffer(width, height, [](int, int) { return std::array<std::uint8_t, 3>{}; }); };
  // The astronaut detected on frame 0, carried over a black frame 1.
  for (GstBuffer* in : {gst_buffer_copy(rgb), black()}) {
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    EXPECT_EQ(rois_of(out).size(), 1u);
    gst_buffer_unref(out);
  }
  GstElement* detect = gst_harness_find_element(h, "taconitedetect");
  ASSERT_NE(detect, nullptr);
  g_object_set(detect, "interval", 1u, nullptr);
  gst_object_unref(detect);
  GstBuffer* out = gst_harness_push_and_pull(h, black());
  EXPECT_TRUE(rois_of(out).empty()) << "frame 2 ran the detector (nothing on black), not carried the face";
  gst_buffer_unref(out);
  out = gst_harness_push_and_pull(h, gst_buffer_copy(rgb));
  ASSERT_EQ(rois_of(out).size(), 1u);
  gboolean fresh = FALSE;
  confidence_of(rois_of(out)[0], &fresh);
  EXPECT_TRUE(fresh) << "every frame detects now";
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

void count_warning(const gchar*, GLogLevelFlags, const gchar*, gpointer data) { ++*static_cast<int*>(data); }

// Issue 29: input sizes outside 32-4096 are refused when set (GObject's range: a warning, the
// property keeps its value), so the element starts and runs at the size it had.
TEST_F(DetectAstronaut, InputSizesOutsideTheRangeAreRefusedAndTheValueStays) {
  GstElement* element = gst_element_factory_make("taconitedetect", nullptr);
  ASSERT_NE(element, nullptr);
  g_object_set(element, "model", yunet_model().c_str(), "input-width", 320u, "input-height", 192u, nullptr);
  int refused = 0;
  const guint handler = g_log_set_handler("GLib-GObject", G_LOG_LEVEL_WARNING, count_warning, &refused);
  for (const guint value : {0u, 1u, 31u, 8192u, 65536u, G_MAXUINT32})
    for (const char* property : {"input-width", "input-height"}) g_object_set(element, property, value, nullptr);
  g_log_remove_handler("GLib-GObject", handler);
  EXPECT_EQ(refused, 12) << "each value refused with a warning";
  guint input_width = 0, input_height = 0;
  g_object_get(element, "input-width", &input_width, "input-height", &input_height, nullptr);
  EXPECT_EQ(input_width, 320u);
  EXPECT_EQ(input_height, 192u);
  GstHarness* h = gst_harness_new_with_element(element, "sink", "src");
  gst_object_unref(element);
  gst_harness_set_src_caps_str(h, video_caps("RGB", width, height).c_str());
  GstBuffer* out = gst_harness_push_and_pull(h, gst_buffer_copy(rgb));
  ASSERT_NE(out, nullptr) << "the pipeline runs";
  EXPECT_EQ(rois_of(out).size(), 1u) << "at 320x192 the astronaut is still found";
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

TEST_F(DetectAstronaut, TaconiteadafaceAlignsTheDetectedFace) {
  auto fake = gsttest::install_fake_engine();
  GstHarness* h = gst_harness_new_parse(
      ("taconitedetect model=\"" + yunet_model() + "\" ! taconiteadaface input-mode=rois bundle=fake").c_str());
  gst_harness_set_src_caps_str(h, video_caps("RGB", width, height).c_str());
  GstBuffer* out = gst_harness_push_and_pull(h, gst_buffer_copy(rgb));
  ASSERT_NE(out, nullptr);
  const std::vector<GstTaconiteEmbeddingMeta*> metas = gsttest::embedding_metas(out);
  ASSERT_EQ(metas.size(), 1u);
  EXPECT_TRUE(metas[0]->aligned);
  gst_buffer_unref(out);
  gst_harness_teardown(h);
  gsttest::uninstall_fake_engine();
}

TEST_F(DetectAstronaut, MinFaceSizeAndSmallFramesAreHandled) {
  GstHarness* h = detect_harness("min-face-size=200");  // the face is ~90 px
  gst_harness_set_src_caps_str(h, video_caps("RGB", width, height).c_str());
  GstBuffer* out = gst_harness_push_and_pull(h, gst_buffer_copy(rgb));
  EXPECT_TRUE(rois_of(out).empty());
  gst_buffer_unref(out);
  gst_harness_teardown(h);
  // A frame far smaller than the network input: scaled up, no crash, and a 1x1 frame gives nothing.
  h = detect_harness("");
  gst_harness_set_src_caps_str(h, video_caps("RGB", 1, 1).c_str());
  out = gst_harness_push_and_pull(h, gsttest::rgb_buffer(1, 1, [](int, int) { return std::array<std::uint8_t, 3>{}; }));
  ASSERT_NE(out, nullptr);
  EXPECT_TRUE(rois_of(out).empty());
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

gsttest::StartFailure start_with(const std::string& model, const char* extra_name = nullptr, guint extra_value = 0) {
  GstElement* element = gst_element_factory_make("taconitedetect", nullptr);
  if (!model.empty()) g_object_set(element, "model", model.c_str(), nullptr);
  if (extra_name) g_object_set(element, extra_name, extra_value, nullptr);
  return gsttest::start_paused(element);
}

TEST(DetectModel, MissingUnreadableAndWrongModelsFailTheStateChangeNamingTheFile) {
  gsttest::StartFailure failure = start_with("");
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(failure.debug.find("face_detection_yunet_2023mar.onnx"), std::string::npos) << failure.debug;

  failure = start_with("/nonexistent/yunet.onnx");
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_EQ(failure.domain, GST_RESOURCE_ERROR);
  EXPECT_NE(failure.message.find("/nonexistent/yunet.onnx"), std::string::npos) << failure.message;
  EXPECT_NE(failure.debug.find("does not exist"), std::string::npos) << failure.debug;

  const std::string text = (std::filesystem::temp_directory_path() / "taconite-detect-not-onnx.onnx").string();
  std::ofstream(text) << "not a network";
  failure = start_with(text);
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(failure.debug.find("expected OpenCV Zoo's YuNet"), std::string::npos) << failure.debug;
  g_unlink(text.c_str());

  const std::string fifo = (std::filesystem::temp_directory_path() / "taconite-detect-fifo.onnx").string();
  g_unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  failure = start_with(fifo);  // refused, not blocked waiting for a writer
  EXPECT_NE(failure.debug.find("FIFO"), std::string::npos) << failure.debug;
  g_unlink(fifo.c_str());
}

TEST(DetectModel, AnInputSizeThatIsNoMultipleOf32IsRefusedAtStart) {
  const gsttest::StartFailure failure = start_with(yunet_model(), "input-width", 100);
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(failure.debug.find("multiple of 32"), std::string::npos) << failure.debug;
}

// The runtime each `runtime` value runs on, as active-runtime reads it once loaded (NULL before).
std::string active_runtime_after_start(const std::string& model, const char* runtime) {
  GstElement* element = gst_element_factory_make("taconitedetect", nullptr);
  g_object_set(element, "model", model.c_str(), nullptr);
  gst_util_set_object_arg(G_OBJECT(element), "runtime", runtime);
  gchar* before = nullptr;
  g_object_get(element, "active-runtime", &before, nullptr);
  EXPECT_EQ(before, nullptr);
  g_free(before);
  std::string active = "(failed)";
  if (gst_element_set_state(element, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE) {
    gchar* value = nullptr;
    g_object_get(element, "active-runtime", &value, nullptr);
    active = value ? value : "(null)";
    g_free(value);
  }
  gst_element_set_state(element, GST_STATE_NULL);
  gst_object_unref(element);
  return active;
}

TEST(DetectModel, RuntimeChoosesWhatRunsTheNetworkAndActiveRuntimeSaysWhich) {
  if (!std::filesystem::is_regular_file(yunet_model())) GTEST_SKIP() << "the YuNet model is not at " << yunet_model();
  EXPECT_EQ(active_runtime_after_start(yunet_model(), "opencv"), "opencv");
  const std::string automatic = active_runtime_after_start(yunet_model(), "auto");
  if (active_runtime_after_start(yunet_model(), "onednn") == "(failed)") {
    EXPECT_EQ(automatic, "opencv") << "a build without oneDNN";
    GTEST_SKIP() << "this build has no oneDNN";
  }
  EXPECT_EQ(automatic, "onednn");
  // A model oneDNN cannot run exactly (a Resize with half-pixel coordinates and floor rounding):
  // runtime=onednn fails the state change naming the node, auto runs it on OpenCV DNN.
  std::ifstream in(yunet_model(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t at = bytes.find("asymmetric");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 10, "half_pixel");
  const std::string edited = (std::filesystem::temp_directory_path() / "taconite-detect-half-pixel.onnx").string();
  std::ofstream(edited, std::ios::binary) << bytes;
  EXPECT_EQ(active_runtime_after_start(edited, "auto"), "opencv");
  GstElement* element = gst_element_factory_make("taconitedetect", nullptr);
  g_object_set(element, "model", edited.c_str(), nullptr);
  gst_util_set_object_arg(G_OBJECT(element), "runtime", "onednn");
  const gsttest::StartFailure failure = gsttest::start_paused(element);
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(failure.debug.find("node 'Resize_43' (Resize)"), std::string::npos) << failure.debug;
  g_unlink(edited.c_str());
}

}  // namespace

namespace {

// The astronaut on a wider black canvas, `offset` pixels to the right.
GstBuffer* shifted_astronaut(GstBuffer* rgb, int width, int height, int canvas_width, int offset) {
  GstMapInfo map;
  if (!gst_buffer_map(rgb, &map, GST_MAP_READ)) return nullptr;
  GstBuffer* out = gsttest::rgb_buffer(canvas_width, height, [&](int x, int y) {
    std::array<std::uint8_t, 3> pixel{};
    const int source = x - offset;
    if (source >= 0 && source < width)
      for (int c = 0; c < 3; ++c) pixel[c] = map.data[(static_cast<std::size_t>(y) * width + source) * 3 + c];
    return pixel;
  });
  gst_buffer_unmap(rgb, &map);
  return out;
}

double centre_distance(const GstVideoRegionOfInterestMeta& a, const GstVideoRegionOfInterestMeta& b) {
  return std::hypot((a.x + a.w / 2.0) - (b.x + b.w / 2.0), (a.y + a.h / 2.0) - (b.y + b.h / 2.0));
}

}  // namespace

// taconitedetect interval=3 ! taconitetrack on a face moving 4 pixels a frame: the frames between
// detections carry the tracker's predicted box (marked predicted), the id never changes, and the
// prediction just before a detection is closer to it than the carried box was.
TEST_F(DetectAstronaut, WithTaconitetrackTheFramesBetweenDetectionsCarryThePredictionAndTheId) {
  constexpr int kSpeed = 4, kFrames = 36, kCanvas = 512 + kSpeed * kFrames;
  GstHarness* h = gst_harness_new_parse(
      ("taconitedetect model=\"" + yunet_model() + "\" interval=3 ! taconitetrack").c_str());
  gst_harness_set_src_caps_str(h, video_caps("RGB", kCanvas, height).c_str());
  std::optional<gint64> id;
  GstVideoRegionOfInterestMeta carried{}, last_predicted{};
  for (int i = 0; i < kFrames; ++i) {
    GstBuffer* out = gst_harness_push_and_pull(h, shifted_astronaut(rgb, width, height, kCanvas, kSpeed * i));
    ASSERT_NE(out, nullptr);
    const auto rois = rois_of(out);
    ASSERT_EQ(rois.size(), 1u) << "frame " << i;
    const GstVideoRegionOfInterestMeta roi = *rois[0];
    gboolean fresh = TRUE, predicted = FALSE;
    confidence_of(rois[0], &fresh);
    gst_structure_get_boolean(gst_video_region_of_interest_meta_get_param(rois[0], "detection"), "predicted",
                              &predicted);
    EXPECT_EQ(fresh, i % 3 == 0) << "frame " << i;
    EXPECT_EQ(predicted, i % 3 != 0) << "frame " << i << ": every frame between detections";
    const auto roi_id = taconite::gst::roi_track_id(rois[0], "object_id");
    if (i >= 6) {  // detections on 0, 3 and 6 confirm the track (min-hits=3)
      ASSERT_TRUE(roi_id) << "frame " << i;
      EXPECT_EQ(*roi_id, id.value_or(*roi_id)) << "frame " << i;
      id = roi_id;
    }
    if (fresh && i >= 12) {
      // The prediction made for the frame before was within a few pixels of this detection, much
      // closer than the box the detector carried (three frames, 12 pixels, behind).
      const double predicted_off = centre_distance(last_predicted, roi), carried_off = centre_distance(carried, roi);
      EXPECT_LT(predicted_off, 0.6 * carried_off) << "frame " << i;
      EXPECT_LT(predicted_off, 4.0 + kSpeed) << "frame " << i;
    }
    if (fresh) carried = roi;
    if (predicted) last_predicted = roi;
    gst_buffer_unref(out);
  }
  gst_harness_teardown(h);
}

// taconitelandmarks: dlib landmarks on a real photo (python3-skimage's astronaut) in every
// accepted format, HOG detection and its interval, bounded work on hostile ROIs, stream events,
// and taconiteadaface downstream aligning the face.
#include <glib/gstdio.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <string>
#include <vector>

#include "face_frames.hpp"
#include "gst_test_support.hpp"

namespace {

using gsttest::install_fake_engine;
using gsttest::uninstall_fake_engine;

using gsttest::astronaut_rgb;
using gsttest::Pt;
using gsttest::rois_of;

std::string caps_for(const char* format, int width, int height) { return gsttest::video_caps(format, width, height); }

std::vector<Pt> points(GstVideoRegionOfInterestMeta* roi, const char* name) { return gsttest::roi_points(roi, name); }

GstHarness* landmarks_harness(const std::string& properties) {
  return gst_harness_new_parse(("taconitelandmarks " + properties).c_str());
}

// The face ROI whose box holds (x, y), or nullptr.
GstVideoRegionOfInterestMeta* face_around(GstBuffer* buffer, guint x, guint y) {
  for (GstVideoRegionOfInterestMeta* roi : rois_of(buffer))
    if (roi->roi_type == g_quark_from_string("face") && roi->x < x && x < roi->x + roi->w && roi->y < y &&
        y < roi->y + roi->h)
      return roi;
  return nullptr;
}

// Keeps one started element for the suite, so every element of its tests shares the loaded model
// (elements using the same file share it) instead of loading ~100 MB each (slow under valgrind).
class LandmarksTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    keeper = gst_element_factory_make("taconitelandmarks", nullptr);
    gst_element_set_state(keeper, GST_STATE_PAUSED);
  }
  static void TearDownTestSuite() {
    gst_element_set_state(keeper, GST_STATE_NULL);
    gst_object_unref(keeper);
    keeper = nullptr;
  }
  static GstElement* keeper;
};
GstElement* LandmarksTest::keeper = nullptr;

class LandmarksElement : public LandmarksTest {};

class LandmarksAstronaut : public LandmarksTest {
 protected:
  void SetUp() override {
    rgb = astronaut_rgb(&width, &height);
    if (!rgb) GTEST_SKIP() << "TACONITE_TEST_ASTRONAUT (python3-skimage's astronaut.png) is not readable";
  }
  void TearDown() override {
    if (rgb) gst_buffer_unref(rgb);
  }
  GstBuffer* rgb = nullptr;
  int width = 0, height = 0;
};

TEST(LandmarksModel, MissingModelFailsTheStateChangeNamingThePath) {
  GstElement* element = gst_element_factory_make("taconitelandmarks", nullptr);
  ASSERT_NE(element, nullptr);
  g_object_set(element, "model", "/nonexistent/taconite/shape_predictor.dat", nullptr);
  const gsttest::StartFailure failure = gsttest::start_paused(element);
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_EQ(failure.domain, GST_RESOURCE_ERROR);
  EXPECT_NE(failure.message.find("/nonexistent/taconite/shape_predictor.dat"), std::string::npos) << failure.message;
  EXPECT_NE(failure.debug.find("does not exist"), std::string::npos) << failure.debug;
}

TEST(LandmarksModel, GarbageModelIsAnErrorNotACrash) {
  gchar* path = nullptr;
  const gint fd = g_file_open_tmp("taconite-landmarks-XXXXXX.dat", &path, nullptr);
  ASSERT_GE(fd, 0);
  const char junk[] = "\x01\x02 this is not a dlib shape predictor \xff\xff\xff\xff\xff\xff\xff\xff";
  ASSERT_EQ(write(fd, junk, sizeof junk), static_cast<ssize_t>(sizeof junk));
  close(fd);
  GstElement* element = gst_element_factory_make("taconitelandmarks", nullptr);
  g_object_set(element, "model", path, nullptr);
  const gsttest::StartFailure failure = gsttest::start_paused(element);
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(failure.domain, 0u) << "no error message";
  EXPECT_NE(failure.message.find(path), std::string::npos) << failure.message;
  g_unlink(path);
  g_free(path);
}

// The 5 points are where a face has them: eyes above the nose above the mouth, the image-left
// ones left, all inside the box; the 68 points come along.
void expect_plausible_face(GstVideoRegionOfInterestMeta* roi) {
  const std::vector<Pt> five = points(roi, "landmarks");
  ASSERT_EQ(five.size(), 5u);
  EXPECT_EQ(points(roi, "landmarks-68").size(), 68u);
  const Pt &left_eye = five[0], &right_eye = five[1], &nose = five[2], &left_mouth = five[3], &right_mouth = five[4];
  EXPECT_LT(left_eye.x, right_eye.x);
  EXPECT_LT(left_mouth.x, right_mouth.x);
  EXPECT_LT(std::max(left_eye.y, right_eye.y), nose.y);
  EXPECT_LT(nose.y, std::min(left_mouth.y, right_mouth.y));
  EXPECT_GT(nose.x, left_eye.x);
  EXPECT_LT(nose.x, right_eye.x);
  for (const Pt& p : five) {
    EXPECT_GE(p.x, roi->x);
    EXPECT_LE(p.x, roi->x + roi->w);
    EXPECT_GE(p.y, roi->y);
    EXPECT_LE(p.y, roi->y + roi->h);
  }
  // The eyes are a sizeable part of the box apart (a face, not a collapsed shape).
  EXPECT_GT(right_eye.x - left_eye.x, 0.25 * roi->w);
}

TEST_F(LandmarksAstronaut, DetectAlwaysFindsTheFaceAndPlacesTheFivePoints) {
  GstHarness* h = landmarks_harness("detect=always");
  gst_harness_set_src_caps_str(h, caps_for("RGB", width, height).c_str());
  GstBuffer* in = gst_buffer_copy(rgb);
  gst_buffer_add_video_region_of_interest_meta(in, "face", 0, 0, 40, 40);  // an upstream ROI, id left as added
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  ASSERT_NE(out, nullptr);
  // The astronaut's face lies around (230, 110) in the 512x512 photo.
  GstVideoRegionOfInterestMeta* face = face_around(out, 230, 110);
  ASSERT_NE(face, nullptr) << "the astronaut's face was not detected";
  double confidence = 0;
  GstStructure* detection = gst_video_region_of_interest_meta_get_param(face, "detection");
  ASSERT_NE(detection, nullptr);
  EXPECT_TRUE(gst_structure_get_double(detection, "confidence", &confidence));
  expect_plausible_face(face);
  // Every ROI of the buffer has its own id, so metas can refer to one.
  std::vector<gint> ids;
  for (GstVideoRegionOfInterestMeta* roi : rois_of(out)) ids.push_back(roi->id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// box-samples averages predictions on shifted boxes: still the same face's points (within a few
// pixels of one prediction's), and values outside 1..5 are refused by the property itself.
TEST_F(LandmarksAstronaut, BoxSamplesAverageToTheSameFace) {
  std::vector<std::vector<Pt>> five_by_samples;
  for (const char* samples : {"1", "5"}) {
    GstHarness* h = landmarks_harness(std::string("detect=always box-samples=") + samples);
    gst_harness_set_src_caps_str(h, caps_for("RGB", width, height).c_str());
    GstBuffer* out = gst_harness_push_and_pull(h, gst_buffer_copy(rgb));
    ASSERT_NE(out, nullptr);
    GstVideoRegionOfInterestMeta* face = face_around(out, 230, 110);
    ASSERT_NE(face, nullptr);
    expect_plausible_face(face);
    five_by_samples.push_back(points(face, "landmarks"));
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
  ASSERT_EQ(five_by_samples[0].size(), 5u);
  ASSERT_EQ(five_by_samples[1].size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(five_by_samples[0][i].x, five_by_samples[1][i].x, 3.0) << "point " << i;
    EXPECT_NEAR(five_by_samples[0][i].y, five_by_samples[1][i].y, 3.0) << "point " << i;
  }
  GstElement* element = gst_element_factory_make("taconitelandmarks", nullptr);
  ASSERT_NE(element, nullptr);
  GParamSpec* spec = g_object_class_find_property(G_OBJECT_GET_CLASS(element), "box-samples");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(G_PARAM_SPEC_UINT(spec)->minimum, 1u);
  EXPECT_EQ(G_PARAM_SPEC_UINT(spec)->maximum, 5u);
  gst_object_unref(element);
}

// A face ROI given upstream (the box dlib finds on the photo) in each format: the landmarks agree.
TEST_F(LandmarksAstronaut, EveryFormatGivesTheSameLandmarks) {
  std::vector<Pt> reference_five, reference_all;
  GstHarness* h = landmarks_harness("detect=never");  // one element: each format is a caps change
  for (const char* format : {"RGB", "BGR", "BGRx", "xRGB", "RGBA", "I420", "NV12", "GRAY8"}) {
    for (int extra : {0, 64}) {
      SCOPED_TRACE(std::string(format) + " row padding " + std::to_string(extra));
      GstBuffer* converted = std::strcmp(format, "RGB") == 0 ? gst_buffer_copy(rgb)
                                                             : gsttest::convert_rgb(rgb, width, height, format);
      ASSERT_NE(converted, nullptr);
      GstBuffer* in = converted;
      if (extra) {
        in = gsttest::restride(converted, format, width, height, extra);
        gst_buffer_unref(converted);
        ASSERT_NE(in, nullptr);
      }
      gst_buffer_add_video_region_of_interest_meta(in, "face", 170, 60, 130, 130);
      gst_harness_set_src_caps_str(h, caps_for(format, width, height).c_str());
      GstBuffer* out = gst_harness_push_and_pull(h, in);
      ASSERT_NE(out, nullptr);
      const std::vector<GstVideoRegionOfInterestMeta*> rois = rois_of(out);
      ASSERT_EQ(rois.size(), 1u) << "detect=never adds no ROI";
      expect_plausible_face(rois[0]);
      const std::vector<Pt> five = points(rois[0], "landmarks"), all = points(rois[0], "landmarks-68");
      ASSERT_EQ(all.size(), 68u);
      if (reference_five.empty()) reference_five = five, reference_all = all;
      double worst_five = 0, mean_all = 0;
      for (std::size_t i = 0; i < five.size(); ++i)
        worst_five = std::max(worst_five, std::hypot(five[i].x - reference_five[i].x, five[i].y - reference_five[i].y));
      for (std::size_t i = 0; i < all.size(); ++i)
        mean_all += std::hypot(all[i].x - reference_all[i].x, all[i].y - reference_all[i].y) / all.size();
      EXPECT_LE(worst_five, 2.0) << "farthest of the 5 alignment points from RGB's, pixels";
      EXPECT_LE(mean_all, 1.5) << "mean distance of the 68 points from RGB's, pixels";
      std::printf("%s+%d: 5-point max %.2f px, 68-point mean %.2f px\n", format, extra, worst_five, mean_all);
      gst_buffer_unref(out);
    }
  }
  gst_harness_teardown(h);
}

// I420/NV12 luma is limited range (16-235) by the caps' default colorimetry; dlib's predictor was
// trained on full-range gray, which RGB input gives. Expanded, YUV frames give landmarks closer to
// RGB's than the raw luma does (the same bytes under caps that say full range, which are used as
// they are): the mean distance of the 68 points from RGB's over 25 boxes around the face.
// (Single points move by a pixel on +-1 gray-level differences, so only the mean over many boxes
// shows the range.)
TEST_F(LandmarksAstronaut, LimitedRangeLumaIsExpandedToGiveTheLandmarksOfRgb) {
  GstBuffer* i420 = gsttest::convert_rgb(rgb, width, height, "I420");
  ASSERT_NE(i420, nullptr);
  const std::string limited = caps_for("I420", width, height), full = limited + ",colorimetry=1:4:0:0";
  for (const auto& [text, range] : {std::pair{limited, GST_VIDEO_COLOR_RANGE_16_235},
                                    std::pair{full, GST_VIDEO_COLOR_RANGE_0_255}}) {
    GstVideoInfo info;
    GstCaps* caps = gst_caps_from_string(text.c_str());
    ASSERT_TRUE(gst_video_info_from_caps(&info, caps));
    gst_caps_unref(caps);
    ASSERT_EQ(GST_VIDEO_INFO_COLORIMETRY(&info).range, range) << text;
  }
  auto landmarks_68 = [&](GstBuffer* frame, const std::string& caps, int dx, int dy) {
    GstHarness* h = landmarks_harness("detect=never");
    gst_harness_set_src_caps_str(h, caps.c_str());
    GstBuffer* in = gst_buffer_copy(frame);
    gst_buffer_add_video_region_of_interest_meta(in, "face", 170 + dx, 60 + dy, 130, 130);
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    std::vector<Pt> all = out ? points(rois_of(out)[0], "landmarks-68") : std::vector<Pt>{};
    if (out) gst_buffer_unref(out);
    gst_harness_teardown(h);
    return all;
  };
  double expanded = 0, raw = 0;
  int boxes = 0;
  for (int dx = -8; dx <= 8; dx += 4)
    for (int dy = -8; dy <= 8; dy += 4) {
      const std::vector<Pt> from_rgb = landmarks_68(rgb, caps_for("RGB", width, height), dx, dy);
      const std::vector<Pt> from_limited = landmarks_68(i420, limited, dx, dy);
      const std::vector<Pt> from_full = landmarks_68(i420, full, dx, dy);
      ASSERT_EQ(from_rgb.size(), 68u);
      ASSERT_EQ(from_limited.size(), 68u);
      ASSERT_EQ(from_full.size(), 68u);
      for (std::size_t i = 0; i < 68; ++i) {
        expanded += std::hypot(from_limited[i].x - from_rgb[i].x, from_limited[i].y - from_rgb[i].y) / 68;
        raw += std::hypot(from_full[i].x - from_rgb[i].x, from_full[i].y - from_rgb[i].y) / 68;
      }
      ++boxes;
    }
  expanded /= boxes, raw /= boxes;
  std::printf("68-point mean distance from RGB over %d boxes: I420 expanded %.3f px, raw luma %.3f px\n", boxes,
              expanded, raw);
  EXPECT_LT(expanded, raw) << "expanding the range brings the landmarks closer to RGB's";
  EXPECT_LE(expanded, 1.65) << "measured 1.575 px; the raw luma gave 1.762 px";
  gst_buffer_unref(i420);
}

TEST_F(LandmarksElement, NoRoiWithDetectNeverPassesTheSharedBufferUntouched) {
  GstHarness* h = landmarks_harness("detect=never");
  gst_harness_set_src_caps_str(h, gsttest::kRgbCaps);
  GstBuffer* in = gsttest::stream_frame(0);
  GstBuffer* keep = gst_buffer_ref(in);  // shared: a writable copy would be a different buffer
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out, keep) << "a buffer with nothing to annotate is not copied";
  EXPECT_TRUE(rois_of(out).empty());
  gst_buffer_unref(out);
  gst_buffer_unref(keep);
  gst_harness_teardown(h);
}

TEST_F(LandmarksElement, WritableBufferIsAnnotatedInPlace) {
  GstHarness* h = landmarks_harness("detect=never");
  gst_harness_set_src_caps_str(h, gsttest::kRgbCaps);
  GstBuffer* in = gsttest::stream_frame(0);
  gst_buffer_add_video_region_of_interest_meta(in, "face", 10, 10, 80, 80);
  GstMemory* pixels = gst_buffer_peek_memory(in, 0);
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(gst_buffer_peek_memory(out, 0), pixels) << "the pixels are never copied";
  ASSERT_EQ(rois_of(out).size(), 1u);
  EXPECT_EQ(points(rois_of(out)[0], "landmarks").size(), 5u);
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

TEST_F(LandmarksElement, ManyAndOutsideRoisAreBoundedAndSkipped) {
  GstHarness* h = landmarks_harness("detect=never max-faces=8");
  gst_harness_set_src_caps_str(h, gsttest::kRgbCaps);
  GstBuffer* in = gsttest::stream_frame(0);
  for (guint i = 0; i < 500; ++i)
    gst_buffer_add_video_region_of_interest_meta(in, "face", i % 100, i % 90, 12 + i % 20, 12 + i % 20);
  gst_buffer_add_video_region_of_interest_meta(in, "face", 112, 0, 50, 50);             // right of the frame
  gst_buffer_add_video_region_of_interest_meta(in, "face", 5000, 5000, 4000, 4000);     // far outside
  gst_buffer_add_video_region_of_interest_meta(in, "face", 0, 0, G_MAXUINT, G_MAXUINT);  // absurdly large
  gst_buffer_add_video_region_of_interest_meta(in, "face", 100, 100, 0, 0);             // empty
  gst_buffer_add_video_region_of_interest_meta(in, "face", 60, 60, 300, 300);  // reaches outside: the largest
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  ASSERT_NE(out, nullptr);
  const std::vector<GstVideoRegionOfInterestMeta*> rois = rois_of(out);
  ASSERT_EQ(rois.size(), 505u);
  std::size_t annotated = 0;
  for (std::size_t i = 0; i < rois.size(); ++i)
    if (!points(rois[i], "landmarks").empty()) ++annotated;
  EXPECT_EQ(annotated, 8u) << "max-faces bounds the work";
  for (std::size_t i = 500; i < 504; ++i) EXPECT_TRUE(points(rois[i], "landmarks").empty()) << "ROI " << i;
  EXPECT_FALSE(points(rois[504], "landmarks").empty()) << "the largest ROI touching the frame comes first";
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// A detected face gets the lowest positive id no ROI of the buffer has: never one another ROI
// already holds, G_MAXINT included.
TEST_F(LandmarksAstronaut, ADetectedFaceGetsAnIdNoOtherRoiHas) {
  GstHarness* h = landmarks_harness("detect=always");
  gst_harness_set_src_caps_str(h, caps_for("RGB", width, height).c_str());
  for (const std::vector<gint>& taken : std::vector<std::vector<gint>>{
           {G_MAXINT}, {1, 2, 3, 5, G_MAXINT}, {0, -7, 1, 1, 2, G_MAXINT - 1, G_MAXINT}}) {
    GstBuffer* in = gst_buffer_copy(rgb);
    for (gint id : taken) gst_buffer_add_video_region_of_interest_meta(in, "person", 0, 0, 20, 20)->id = id;
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    ASSERT_NE(out, nullptr);
    GstVideoRegionOfInterestMeta* face = face_around(out, 230, 110);
    ASSERT_NE(face, nullptr);
    const gint lowest_free = taken.size() == 1 ? 1 : taken.size() == 5 ? 4 : 3;
    EXPECT_EQ(face->id, lowest_free) << "after ids " << ::testing::PrintToString(taken);
    gst_buffer_unref(out);
  }
  // Many ids used: 1..300 (as 300 people) leaves 301.
  GstBuffer* in = gst_buffer_copy(rgb);
  for (gint id = 300; id >= 1; --id) gst_buffer_add_video_region_of_interest_meta(in, "person", 0, 0, 8, 8)->id = id;
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  ASSERT_NE(out, nullptr);
  GstVideoRegionOfInterestMeta* face = face_around(out, 230, 110);
  ASSERT_NE(face, nullptr);
  EXPECT_EQ(face->id, 301);
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// The per-frame bound on predictions: each face reserves 2 x box-samples of 256 runs, so 200
// frame-sized ROIs with max-faces=1024 get landmarks on the 25 (box-samples=5) or 128
// (box-samples=1) largest; the rest are counted in faces-skipped.
TEST_F(LandmarksElement, PredictionsPerFrameAreBoundedAndTheSkippedFacesCounted) {
  for (const auto& [samples, annotated_expected] : {std::pair{5u, 25u}, std::pair{1u, 128u}}) {
    SCOPED_TRACE("box-samples=" + std::to_string(samples));
    GstHarness* h = landmarks_harness("name=lm detect=never max-faces=1024 box-samples=" + std::to_string(samples));
    gst_harness_set_src_caps_str(h, gsttest::kRgbCaps);
    GstBuffer* in = gsttest::stream_frame(0);
    for (guint i = 0; i < 200; ++i) gst_buffer_add_video_region_of_interest_meta(in, "face", 0, 0, 112 - i % 50, 112);
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    ASSERT_NE(out, nullptr);
    std::size_t annotated = 0;
    guint smallest_annotated = G_MAXUINT, largest_skipped = 0;
    for (GstVideoRegionOfInterestMeta* roi : rois_of(out)) {
      if (!points(roi, "landmarks").empty())
        ++annotated, smallest_annotated = std::min(smallest_annotated, roi->w);
      else
        largest_skipped = std::max(largest_skipped, roi->w);
    }
    EXPECT_EQ(annotated, annotated_expected);
    EXPECT_GE(smallest_annotated, largest_skipped) << "the largest faces come first";
    GstElement* lm = gst_bin_get_by_name(GST_BIN(h->element), "lm");
    ASSERT_NE(lm, nullptr);
    EXPECT_EQ(gsttest::counter(lm, "faces-skipped"), 200u - annotated_expected);
    gst_object_unref(lm);
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
}

// A face far larger than the predictor's 320-pixel box is predicted on a scaled-down copy: the
// astronaut at 5 times its size gives about 5 times the points of the original, tilted faces too
// (the photo turned by 30 degrees). "About": the upscaled photo is blurred, which moves dlib's
// points by up to ~20 % of the inter-ocular distance (IOD) on the turned photo, as much with an
// unscaled prediction (measured); a wrong mapping back to the frame would be off by far more.
TEST_F(LandmarksAstronaut, AHugeFaceIsPredictedOnAScaledCopyAtTheSamePlace) {
  constexpr double zoom = 5.0;
  for (const double angle : {0.0, 30.0}) {
    SCOPED_TRACE("turned by " + std::to_string(angle));
    auto landmarks_of = [&](double scale) {
      const char* path = std::getenv("TACONITE_TEST_ASTRONAUT");
      cv::Mat bgr = cv::imread(path, cv::IMREAD_COLOR);
      const cv::Point2f centre(235, 125);
      cv::warpAffine(bgr, bgr, cv::getRotationMatrix2D(centre, angle, 1.0), bgr.size());
      if (scale != 1.0) cv::resize(bgr, bgr, cv::Size(), scale, scale, cv::INTER_LINEAR);
      GstBuffer* in = gsttest::rgb_buffer(bgr.cols, bgr.rows, [&](int x, int y) {
        const cv::Vec3b p = bgr.at<cv::Vec3b>(y, x);
        return std::array<std::uint8_t, 3>{p[2], p[1], p[0]};
      });
      gst_buffer_add_video_region_of_interest_meta(in, "face", static_cast<guint>(170 * scale),
                                                   static_cast<guint>(60 * scale), static_cast<guint>(130 * scale),
                                                   static_cast<guint>(130 * scale));
      GstHarness* h = landmarks_harness("detect=never");
      gst_harness_set_src_caps_str(h, caps_for("RGB", bgr.cols, bgr.rows).c_str());
      GstBuffer* out = gst_harness_push_and_pull(h, in);
      std::vector<Pt> five = out ? points(rois_of(out)[0], "landmarks") : std::vector<Pt>{};
      if (out) gst_buffer_unref(out);
      gst_harness_teardown(h);
      return five;
    };
    const std::vector<Pt> small = landmarks_of(1.0), big = landmarks_of(zoom);
    ASSERT_EQ(small.size(), 5u);
    ASSERT_EQ(big.size(), 5u);
    const double tolerance = 0.25 * std::hypot(small[1].x - small[0].x, small[1].y - small[0].y) * zoom;
    for (std::size_t i = 0; i < 5; ++i)
      EXPECT_LE(std::hypot(big[i].x - small[i].x * zoom, big[i].y - small[i].y * zoom), tolerance) << "point " << i;
  }
}

// A frame wider than OpenCV warps from (32767 pixels) with a ROI across it: landmarks, not an error.
TEST_F(LandmarksElement, AFaceOnAFrameWiderThanOpenCvWarpsGetsLandmarks) {
  constexpr int kWidth = 40000, kHeight = 4;
  GstHarness* h = landmarks_harness("detect=never");
  gst_harness_set_src_caps_str(h, ("video/x-raw,format=GRAY8,width=" + std::to_string(kWidth) +
                                   ",height=" + std::to_string(kHeight) + ",framerate=30/1")
                                      .c_str());
  GstBuffer* in = gst_buffer_new_allocate(nullptr, kWidth * kHeight, nullptr);
  gst_buffer_memset(in, 0, 120, kWidth * kHeight);
  gst_buffer_add_video_region_of_interest_meta(in, "face", 0, 0, kWidth, kHeight);
  gst_buffer_add_video_region_of_interest_meta(in, "face", 30000, 0, 4, 4);
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  ASSERT_NE(out, nullptr) << "the buffer passed";
  ASSERT_EQ(rois_of(out).size(), 2u);
  for (GstVideoRegionOfInterestMeta* roi : rois_of(out)) {
    const std::vector<Pt> five = points(roi, "landmarks");
    ASSERT_EQ(five.size(), 5u);
    for (const Pt& p : five) EXPECT_TRUE(std::isfinite(p.x) && std::isfinite(p.y));
  }
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// model is GST_PARAM_MUTABLE_READY: a set while PLAYING is ignored (with a warning), not
// half-applied to a loaded model.
TEST_F(LandmarksElement, ModelCannotChangeWhilePlaying) {
  GstElement* element = gst_element_factory_make("taconitelandmarks", nullptr);
  ASSERT_NE(element, nullptr);
  ASSERT_NE(gst_element_set_state(element, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  g_object_set(element, "model", "/elsewhere/model.dat", "max-faces", 5u, nullptr);
  gchar* model = nullptr;
  guint max_faces = 0;
  g_object_get(element, "model", &model, "max-faces", &max_faces, nullptr);
  EXPECT_STREQ(model, "/usr/share/dlib/shape_predictor_68_face_landmarks.dat");
  EXPECT_EQ(max_faces, 5u) << "a MUTABLE_PLAYING property still changes";
  g_free(model);
  gst_element_set_state(element, GST_STATE_READY);
  g_object_set(element, "model", "/elsewhere/model.dat", nullptr);
  g_object_get(element, "model", &model, nullptr);
  EXPECT_STREQ(model, "/elsewhere/model.dat") << "in READY it changes";
  g_free(model);
  gst_element_set_state(element, GST_STATE_NULL);
  gst_object_unref(element);
}

// detect-interval=3: the next two frames carry the first detection's boxes (even when black);
// a flush forgets them, so a black frame then gets no face.
TEST_F(LandmarksAstronaut, DetectIntervalCarriesBoxesUntilAFlush) {
  GstHarness* h = landmarks_harness("detect=always detect-interval=3");
  gst_harness_set_src_caps_str(h, caps_for("RGB", width, height).c_str());
  auto black = [&] {
    return gsttest::rgb_buffer(width, height, [](int, int) { return std::array<std::uint8_t, 3>{}; });
  };
  GstBuffer* out = gst_harness_push_and_pull(h, gst_buffer_ref(rgb));
  ASSERT_NE(out, nullptr);
  GstVideoRegionOfInterestMeta* face = face_around(out, 230, 110);
  ASSERT_NE(face, nullptr);
  const guint x = face->x, w = face->w;
  expect_plausible_face(face);
  gst_buffer_unref(out);
  out = gst_harness_push_and_pull(h, black());
  face = face_around(out, 230, 110);
  ASSERT_NE(face, nullptr) << "the second frame reuses the detection";
  EXPECT_EQ(face->x, x);
  EXPECT_EQ(face->w, w);
  gst_buffer_unref(out);
  EXPECT_TRUE(gst_harness_push_event(h, gst_event_new_flush_start()));
  EXPECT_TRUE(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
  gst_harness_set_src_caps_str(h, caps_for("RGB", width, height).c_str());
  out = gst_harness_push_and_pull(h, black());
  ASSERT_NE(out, nullptr);
  EXPECT_TRUE(rois_of(out).empty()) << "a flush starts with a fresh detection";
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// The photo at twice its size, detected at half scale: the box comes back in frame pixels, around
// the face at twice its place in the original.
TEST_F(LandmarksAstronaut, DetectScaleMapsBoxesBackToTheFrame) {
  int big_width = 0, big_height = 0;
  GstBuffer* big = astronaut_rgb(&big_width, &big_height, 2.0);
  ASSERT_NE(big, nullptr);
  GstHarness* h = landmarks_harness("detect=always detect-scale=0.5");
  gst_harness_set_src_caps_str(h, caps_for("RGB", big_width, big_height).c_str());
  GstBuffer* out = gst_harness_push_and_pull(h, big);
  ASSERT_NE(out, nullptr);
  GstVideoRegionOfInterestMeta* face = face_around(out, 460, 220);
  ASSERT_NE(face, nullptr) << "the astronaut's face was not detected";
  EXPECT_GT(face->w, 150u) << "a box of the full-size frame, not of the half-size copy";
  expect_plausible_face(face);
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

TEST_F(LandmarksAstronaut, DetectAutoSkipsFramesThatCarryFaces) {
  GstHarness* h = landmarks_harness("");
  gst_harness_set_src_caps_str(h, caps_for("RGB", width, height).c_str());
  GstBuffer* in = gst_buffer_copy(rgb);
  gst_buffer_add_video_region_of_interest_meta(in, "face", 170, 60, 130, 130);
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  ASSERT_EQ(rois_of(out).size(), 1u) << "auto does not detect on a frame with a face ROI";
  gst_buffer_unref(out);
  out = gst_harness_push_and_pull(h, gst_buffer_ref(rgb));
  ASSERT_NE(face_around(out, 230, 110), nullptr) << "auto detects on a frame without one";
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

TEST_F(LandmarksElement, CapsChangeAndEos) {
  GstHarness* h = landmarks_harness("detect=auto");
  gst_harness_set_src_caps_str(h, gsttest::kRgbCaps);
  GstBuffer* in = gsttest::stream_frame(0);
  gst_buffer_add_video_region_of_interest_meta(in, "face", 10, 10, 80, 80);
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  ASSERT_NE(out, nullptr);
  gst_buffer_unref(out);
  // Now GRAY8 at another size: the element reads the new layout.
  gst_harness_set_src_caps_str(h, "video/x-raw,format=GRAY8,width=64,height=48,framerate=30/1");
  GstBuffer* gray = gst_buffer_new_allocate(nullptr, 64 * 48, nullptr);
  gst_buffer_memset(gray, 0, 90, 64 * 48);
  gst_buffer_add_video_region_of_interest_meta(gray, "face", 40, 30, 40, 40);  // reaches outside
  out = gst_harness_push_and_pull(h, gray);
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(rois_of(out).size(), 1u);
  for (const Pt& p : points(rois_of(out)[0], "landmarks")) EXPECT_TRUE(std::isfinite(p.x) && std::isfinite(p.y));
  gst_buffer_unref(out);
  EXPECT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
  bool saw_eos = false;
  while (GstEvent* event = gst_harness_try_pull_event(h)) {
    saw_eos = saw_eos || GST_EVENT_TYPE(event) == GST_EVENT_EOS;
    gst_event_unref(event);
  }
  EXPECT_TRUE(saw_eos);
  gst_harness_teardown(h);
}

TEST_F(LandmarksAstronaut, TaconiteadafaceDownstreamEmbedsTheFaceAligned) {
  auto engine = install_fake_engine();
  GstHarness* h = gst_harness_new_parse("taconitelandmarks detect=always ! taconiteadaface bundle=fake");
  gst_harness_set_src_caps_str(h, caps_for("RGB", width, height).c_str());
  GstBuffer* out = gst_harness_push_and_pull(h, gst_buffer_ref(rgb));
  ASSERT_NE(out, nullptr);
  GstVideoRegionOfInterestMeta* face = face_around(out, 230, 110);
  ASSERT_NE(face, nullptr);
  bool aligned_face = false;
  for (GstTaconiteEmbeddingMeta* meta : gsttest::embedding_metas(out))
    if (meta->roi_id == face->id) aligned_face = meta->aligned;
  EXPECT_TRUE(aligned_face) << "taconiteadaface warped the detected face by its landmarks";
  gst_buffer_unref(out);
  gst_harness_teardown(h);
  uninstall_fake_engine();
}

}  // namespace

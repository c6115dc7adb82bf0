// Landmark alignment: the similarity fit (exact and least squares), the landmark encodings read
// from ROI params, the warp the engine sees, and (real IR-tiny engine) that a rotated, scaled
// face embeds like the upright one once aligned; and that the element aligns with the points the
// public API reads.
#include <gst/taconite/gsttaconiteface.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "roi_landmarks.hpp"
#include "gst_test_support.hpp"

namespace {

using namespace gsttest;
using taconite::vision::Point2;

constexpr double kPi = 3.14159265358979323846;

struct Similarity {
  double angle = 0, scale = 1, tx = 0, ty = 0;
  Point2 apply(Point2 p) const {
    const double c = std::cos(angle) * scale, s = std::sin(angle) * scale;
    return {c * p.x - s * p.y + tx, s * p.x + c * p.y + ty};
  }
  Point2 invert(Point2 q) const {
    const double c = std::cos(angle) / scale, s = std::sin(angle) / scale;
    const double x = q.x - tx, y = q.y - ty;
    return {c * x + s * y, -s * x + c * y};
  }
};

Point2 apply(const cv::Matx23d& m, Point2 p) {
  return {m(0, 0) * p.x + m(0, 1) * p.y + m(0, 2), m(1, 0) * p.x + m(1, 1) * p.y + m(1, 2)};
}

double sse(const cv::Matx23d& m, const std::vector<Point2>& src, const std::array<Point2, 5>& dst) {
  double e = 0;
  for (std::size_t i = 0; i < src.size(); ++i) {
    const Point2 q = apply(m, src[i]);
    e += (q.x - dst[i].x) * (q.x - dst[i].x) + (q.y - dst[i].y) * (q.y - dst[i].y);
  }
  return e;
}

TEST(FitSimilarity, TemplateHasTheSpecPoints) {
  const auto t = taconite::vision::alignment_template(112, 112);
  EXPECT_DOUBLE_EQ(t[0].x, 38.2946);
  EXPECT_DOUBLE_EQ(t[4].y, 92.2041);
  EXPECT_DOUBLE_EQ(taconite::vision::alignment_template(224, 224)[1].x, 2 * 73.5318);
}

TEST(FitSimilarity, RecoversAKnownSimilarityToSubPixel) {
  const auto tmpl = taconite::vision::alignment_template(112, 112);
  const Similarity truth{27 * kPi / 180, 1.9, 210.5, 95.25};
  std::vector<Point2> landmarks;
  for (const Point2& p : tmpl) landmarks.push_back(truth.apply(p));
  const auto m = taconite::vision::alignment_transform(landmarks, 112, 112);
  ASSERT_TRUE(m.has_value());
  for (std::size_t i = 0; i < 5; ++i) {
    const Point2 q = apply(*m, landmarks[i]);
    EXPECT_NEAR(q.x, tmpl[i].x, 1e-6);
    EXPECT_NEAR(q.y, tmpl[i].y, 1e-6);
  }
  // The fitted matrix is the inverse of the truth: a rotation by -27 degrees scaled by 1/1.9.
  EXPECT_NEAR(std::hypot((*m)(0, 0), (*m)(1, 0)), 1 / 1.9, 1e-9);
  EXPECT_NEAR(std::atan2((*m)(1, 0), (*m)(0, 0)), -27 * kPi / 180, 1e-9);
  EXPECT_NEAR((*m)(0, 0), (*m)(1, 1), 1e-12) << "no shear, no reflection";
  EXPECT_NEAR((*m)(0, 1), -(*m)(1, 0), 1e-12);
}

TEST(FitSimilarity, NoisyLandmarksGetTheLeastSquaresFit) {
  const auto tmpl = taconite::vision::alignment_template(112, 112);
  const Similarity truth{-12 * kPi / 180, 0.8, 40, 70};
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0.0, 1.5);
  std::vector<Point2> landmarks;
  for (const Point2& p : tmpl) {
    Point2 q = truth.apply(p);
    landmarks.push_back({q.x + noise(rng), q.y + noise(rng)});
  }
  const auto m = taconite::vision::alignment_transform(landmarks, 112, 112);
  ASSERT_TRUE(m.has_value());
  const double best = sse(*m, landmarks, tmpl);
  // No similarity does better: not the noiseless truth, not any small change of the four parameters.
  cv::Matx23d truth_inverse;
  const Point2 o = truth.invert({0, 0}), ex = truth.invert({1, 0});
  truth_inverse = cv::Matx23d(ex.x - o.x, -(ex.y - o.y), o.x, ex.y - o.y, ex.x - o.x, o.y);
  EXPECT_LT(best, sse(truth_inverse, landmarks, tmpl));
  for (int k = 0; k < 4; ++k)
    for (double step : {-1e-3, 1e-3}) {
      cv::Matx23d other = *m;
      if (k == 0) other(0, 0) += step, other(1, 1) += step;
      if (k == 1) other(1, 0) += step, other(0, 1) -= step;
      if (k == 2) other(0, 2) += step * 100;
      if (k == 3) other(1, 2) += step * 100;
      EXPECT_GT(sse(other, landmarks, tmpl), best) << "parameter " << k << " step " << step;
    }
}

TEST(FitSimilarity, TwoEyesMapExactlyOntoTheTemplateEyes) {
  const auto tmpl = taconite::vision::alignment_template(112, 112);
  const std::vector<Point2> eyes = {{300.0, 210.0}, {362.0, 236.0}};
  const auto m = taconite::vision::alignment_transform(eyes, 112, 112);
  ASSERT_TRUE(m.has_value());
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(apply(*m, eyes[i]).x, tmpl[i].x, 1e-9);
    EXPECT_NEAR(apply(*m, eyes[i]).y, tmpl[i].y, 1e-9);
  }
  EXPECT_FALSE(taconite::vision::alignment_transform(std::vector<Point2>{{1, 1}, {1, 1}}, 112, 112).has_value())
      << "coincident eyes determine nothing";
  EXPECT_FALSE(taconite::vision::alignment_transform(std::vector<Point2>{{1, 1}, {5, 1}, {3, 3}}, 112, 112).has_value());
}

/* ---- landmark encodings ---------------------------------------------------------------------- */

class LandmarkParams : public ::testing::Test {
 protected:
  void SetUp() override {
    buffer = gst_buffer_new();
    roi = gst_buffer_add_video_region_of_interest_meta(buffer, "face", 100, 50, 200, 100);
  }
  void TearDown() override { gst_buffer_unref(buffer); }
  static void set_numbers(GstStructure* s, const char* field, const std::vector<double>& values) {
    GValue array = G_VALUE_INIT;
    gst_value_array_init(&array, static_cast<guint>(values.size()));
    for (double v : values) {
      GValue item = G_VALUE_INIT;
      g_value_init(&item, G_TYPE_DOUBLE);
      g_value_set_double(&item, v);
      gst_value_array_append_and_take_value(&array, &item);
    }
    gst_structure_take_value(s, field, &array);
  }
  GstBuffer* buffer = nullptr;
  GstVideoRegionOfInterestMeta* roi = nullptr;
};

TEST_F(LandmarkParams, NoParamsMeansNoLandmarks) { EXPECT_TRUE(taconite::gst::roi_landmarks(roi).empty()); }

TEST_F(LandmarkParams, LandmarksStructureInFramePixels) {
  GstStructure* s = gst_structure_new_empty("landmarks");
  set_numbers(s, "x", {130, 170, 150, 135, 165});
  set_numbers(s, "y", {80, 80, 95, 110, 110});
  gst_video_region_of_interest_meta_add_param(roi, s);
  const auto points = taconite::gst::roi_landmarks(roi);
  ASSERT_EQ(points.size(), 5u);
  EXPECT_DOUBLE_EQ(points[2].x, 150);
  EXPECT_DOUBLE_EQ(points[4].y, 110);
}

TEST_F(LandmarkParams, NormalizedLandmarksAreFractionsOfTheBox) {
  GstStructure* s = gst_structure_new("landmarks", "normalized", G_TYPE_BOOLEAN, TRUE, nullptr);
  set_numbers(s, "x", {0.25, 0.75});
  set_numbers(s, "y", {0.5, 0.5});
  gst_video_region_of_interest_meta_add_param(roi, s);
  const auto points = taconite::gst::roi_landmarks(roi);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_DOUBLE_EQ(points[0].x, 100 + 0.25 * 200);
  EXPECT_DOUBLE_EQ(points[1].y, 50 + 0.5 * 100);
}

TEST_F(LandmarkParams, DlStreamerLandmarkPointsInDataOrDataBuffer) {
  GstStructure* s = gst_structure_new("detection_landmarks", "format", G_TYPE_STRING, "landmark_points", nullptr);
  set_numbers(s, "data", {0.3, 0.4, 0.7, 0.4, 0.5, 0.6, 0.35, 0.8, 0.65, 0.8});
  gst_video_region_of_interest_meta_add_param(roi, s);
  auto points = taconite::gst::roi_landmarks(roi);
  ASSERT_EQ(points.size(), 5u);
  EXPECT_DOUBLE_EQ(points[1].x, 100 + 0.7 * 200);
  EXPECT_DOUBLE_EQ(points[3].y, 50 + 0.8 * 100);

  GstBuffer* other = gst_buffer_new();
  GstVideoRegionOfInterestMeta* r = gst_buffer_add_video_region_of_interest_meta(other, "face", 0, 0, 100, 100);
  const float values[4] = {0.25f, 0.5f, 0.75f, 0.5f};
  guint8 le[16];
  for (int i = 0; i < 4; ++i) {
    guint32 bits;
    std::memcpy(&bits, &values[i], 4);
    bits = GUINT32_TO_LE(bits);
    std::memcpy(le + 4 * i, &bits, 4);
  }
  GVariant* variant = g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, le, sizeof le, 1);
  GstStructure* t = gst_structure_new("eyes", "format", G_TYPE_STRING, "landmark_points", "data_buffer",
                                      G_TYPE_VARIANT, variant, nullptr);
  gst_video_region_of_interest_meta_add_param(r, t);
  points = taconite::gst::roi_landmarks(r);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_DOUBLE_EQ(points[0].x, 25);
  EXPECT_DOUBLE_EQ(points[1].x, 75);
  EXPECT_DOUBLE_EQ(points[1].y, 50);
  gst_buffer_unref(other);
}

TEST_F(LandmarkParams, FacedetectEyePairBoxGivesTwoEyeCentres) {
  gst_video_region_of_interest_meta_add_param(
      roi, gst_structure_new("face", "eyes->x", G_TYPE_UINT, 140u, "eyes->y", G_TYPE_UINT, 70u, "eyes->width",
                             G_TYPE_UINT, 80u, "eyes->height", G_TYPE_UINT, 20u, nullptr));
  const auto points = taconite::gst::roi_landmarks(roi);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_DOUBLE_EQ(points[0].x, 160);
  EXPECT_DOUBLE_EQ(points[1].x, 200);
  EXPECT_DOUBLE_EQ(points[0].y, 80);
}

TEST_F(LandmarkParams, WrongPointCountsAreIgnored) {
  GstStructure* s = gst_structure_new_empty("landmarks");
  set_numbers(s, "x", {1, 2, 3});
  set_numbers(s, "y", {1, 2, 3});
  gst_video_region_of_interest_meta_add_param(roi, s);
  EXPECT_TRUE(taconite::gst::roi_landmarks(roi).empty());
}

/* ---- the element ----------------------------------------------------------------------------- */

// A smooth synthetic face in template coordinates (u, v in 112x112 pixels): skin gradient, dark
// eyes, nose and mouth blobs. Smooth, so resampling changes it little.
std::array<std::uint8_t, 3> face_at(double u, double v) {
  auto blob = [&](double cx, double cy, double sx, double sy) {
    return std::exp(-((u - cx) * (u - cx) / (2 * sx * sx) + (v - cy) * (v - cy) / (2 * sy * sy)));
  };
  const double dark = 0.9 * blob(38.3, 51.7, 6, 4) + 0.9 * blob(73.5, 51.5, 6, 4) + 0.5 * blob(56, 70, 4, 7) +
                      0.8 * blob(56, 92, 14, 4);
  const double skin = 0.6 + 0.3 * blob(56, 60, 40, 50);
  auto channel = [&](double base) { return static_cast<std::uint8_t>(std::clamp(base * skin * (1 - dark), 0.0, 255.0)); };
  return {channel(240 + 0.1 * u), channel(190), channel(150 + 0.2 * v)};
}

constexpr int kFrameW = 320, kFrameH = 240;

// A frame showing the face through `where` (template -> frame), with its 5 landmarks as a ROI param.
GstBuffer* frame_with_face(const Similarity& where) {
  GstBuffer* buffer = rgb_buffer(kFrameW, kFrameH, [&](int x, int y) {
    const Point2 t = where.invert({double(x), double(y)});
    return face_at(t.x, t.y);
  });
  const auto tmpl = taconite::vision::alignment_template(112, 112);
  std::vector<double> xs, ys;
  for (const Point2& p : tmpl) {
    const Point2 q = where.apply(p);
    xs.push_back(q.x);
    ys.push_back(q.y);
  }
  const Point2 corner = where.apply({0, 0});
  GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(
      buffer, "face", static_cast<guint>(std::max(0.0, corner.x - 20)), static_cast<guint>(std::max(0.0, corner.y - 20)),
      static_cast<guint>(112 * where.scale), static_cast<guint>(112 * where.scale));
  GstStructure* s = gst_structure_new_empty("landmarks");
  GValue ax = G_VALUE_INIT, ay = G_VALUE_INIT;
  gst_value_array_init(&ax, 5);
  gst_value_array_init(&ay, 5);
  for (int i = 0; i < 5; ++i) {
    GValue vx = G_VALUE_INIT, vy = G_VALUE_INIT;
    g_value_init(&vx, G_TYPE_DOUBLE);
    g_value_init(&vy, G_TYPE_DOUBLE);
    g_value_set_double(&vx, xs[i]);
    g_value_set_double(&vy, ys[i]);
    gst_value_array_append_and_take_value(&ax, &vx);
    gst_value_array_append_and_take_value(&ay, &vy);
  }
  gst_structure_take_value(s, "x", &ax);
  gst_structure_take_value(s, "y", &ay);
  gst_video_region_of_interest_meta_add_param(roi, s);
  return buffer;
}

const char* kFrameCaps = "video/x-raw,format=RGB,width=320,height=240,framerate=30/1";
const Similarity kUpright{0, 1, 100, 60};
const Similarity kTurned{25 * kPi / 180, 1.6, 170, 10};

TEST(AlignmentElement, EngineSeesTheUprightTemplateFace) {
  auto engine = install_fake_engine();
  GstHarness* h = adaface_harness({{"bundle", "fake"}, {"input-mode", "rois"}});
  gst_harness_set_src_caps_str(h, kFrameCaps);
  GstBuffer* out = gst_harness_push_and_pull(h, frame_with_face(kTurned));
  ASSERT_NE(out, nullptr);
  GstTaconiteEmbeddingMeta* meta = gst_buffer_get_taconite_embedding_meta(out);
  ASSERT_NE(meta, nullptr);
  EXPECT_TRUE(meta->aligned) << "landmarks were present";
  ASSERT_EQ(engine->faces_seen(), 1u);
  const std::vector<float> expected = expected_chw(112, 112, [](int x, int y) { return face_at(x, y); });
  double diff = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) diff += std::fabs(expected[i] - engine->inputs[0][i]);
  diff /= static_cast<double>(expected.size());
  EXPECT_LT(diff, 0.02) << "mean |difference| in normalised units (1 grey level = 0.0078)";
  gst_buffer_unref(out);
  gst_harness_teardown(h);
  uninstall_fake_engine();
}

// The frame message repeats the landmarks the ROI carried (x0 y0 x1 y1 ..., frame pixels).
TEST(AlignmentElement, FrameMessageCarriesTheRoiLandmarks) {
  auto engine = install_fake_engine();
  GstHarness* h = adaface_harness({{"bundle", "fake"}, {"input-mode", "rois"}, {"post-messages", "true"}});
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(h->element, bus);
  gst_harness_set_src_caps_str(h, kFrameCaps);
  gst_buffer_unref(gst_harness_push_and_pull(h, frame_with_face(kTurned)));
  GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT);
  ASSERT_NE(msg, nullptr);
  const GValue* faces = gst_structure_get_value(gst_message_get_structure(msg), "faces");
  ASSERT_EQ(gst_value_list_get_size(faces), 1u);
  const GValue* points =
      gst_structure_get_value(gst_value_get_structure(gst_value_list_get_value(faces, 0)), "landmarks");
  ASSERT_NE(points, nullptr);
  ASSERT_EQ(gst_value_array_get_size(points), 10u);
  const auto tmpl = taconite::vision::alignment_template(112, 112);
  for (int i = 0; i < 5; ++i) {
    const Point2 q = kTurned.apply(tmpl[i]);
    EXPECT_DOUBLE_EQ(g_value_get_double(gst_value_array_get_value(points, 2 * i)), q.x) << "point " << i;
    EXPECT_DOUBLE_EQ(g_value_get_double(gst_value_array_get_value(points, 2 * i + 1)), q.y) << "point " << i;
  }
  gst_message_unref(msg);
  gst_element_set_bus(h->element, nullptr);
  gst_object_unref(bus);
  gst_harness_teardown(h);
  uninstall_fake_engine();
}

// The elements and the public API read one face: a ROI whose landmarks come in a foreign encoding
// (DL Streamer's data_buffer, facedetect's eye pair) is aligned by taconiteadaface exactly as a ROI
// carrying, as plain "landmarks", the points gst_taconite_roi_get_landmarks returns for it.
class SameFaceTest : public ::testing::Test {
 protected:
  void SetUp() override { engine = install_fake_engine(); }
  void TearDown() override { uninstall_fake_engine(); }

  static GstVideoRegionOfInterestMeta* only_roi(GstBuffer* buffer) {
    return reinterpret_cast<GstVideoRegionOfInterestMeta*>(
        gst_buffer_get_meta(buffer, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE));
  }
  // The public API's points of `foreign`'s ROI, after `encode` replaced its landmarks.
  static std::vector<Point2> api_points(GstBuffer* foreign) {
    gdouble *x = nullptr, *y = nullptr;
    guint n = 0;
    std::vector<Point2> points;
    if (gst_taconite_roi_get_landmarks(only_roi(foreign), &x, &y, &n))
      for (guint i = 0; i < n; ++i) points.push_back({x[i], y[i]});
    g_free(x);
    g_free(y);
    return points;
  }
  // Embeds `foreign` and a copy of its frame whose ROI carries `points` as plain landmarks; both
  // must be aligned, and the engine must have seen the same input twice.
  void expect_same_alignment(GstBuffer* foreign, GstBuffer* plain, const std::vector<Point2>& points) {
    GstVideoRegionOfInterestMeta* roi = only_roi(plain);
    gst_taconite_roi_remove_param(roi, "landmarks");
    std::vector<gdouble> xs, ys;
    for (const Point2& p : points) {
      xs.push_back(p.x);
      ys.push_back(p.y);
    }
    ASSERT_TRUE(gst_taconite_roi_set_landmarks(roi, xs.data(), ys.data(), static_cast<guint>(points.size())));
    GstHarness* h = adaface_harness({{"bundle", "fake"}, {"input-mode", "rois"}});
    gst_harness_set_src_caps_str(h, kFrameCaps);
    for (GstBuffer* in : {foreign, plain}) {
      GstBuffer* out = gst_harness_push_and_pull(h, in);
      ASSERT_NE(out, nullptr);
      GstTaconiteEmbeddingMeta* meta = gst_buffer_get_taconite_embedding_meta(out);
      ASSERT_NE(meta, nullptr);
      EXPECT_TRUE(meta->aligned);
      gst_buffer_unref(out);
    }
    gst_harness_teardown(h);
    ASSERT_EQ(engine->faces_seen(), 2u);
    EXPECT_EQ(engine->inputs[0], engine->inputs[1]) << "the element aligned with the points the API returns";
  }
  std::shared_ptr<FakeEngineState> engine;
};

TEST_F(SameFaceTest, DlStreamerDataBufferLandmarks) {
  GstBuffer* foreign = frame_with_face(kTurned);
  GstVideoRegionOfInterestMeta* roi = only_roi(foreign);
  gst_taconite_roi_remove_param(roi, "landmarks");
  const auto tmpl = taconite::vision::alignment_template(112, 112);
  std::vector<guint8> le;
  for (const Point2& t : tmpl) {
    const Point2 q = kTurned.apply(t);
    for (double fraction : {(q.x - roi->x) / roi->w, (q.y - roi->y) / roi->h}) {
      const float f = static_cast<float>(fraction);
      guint32 bits = 0;
      std::memcpy(&bits, &f, 4);
      bits = GUINT32_TO_LE(bits);
      le.insert(le.end(), reinterpret_cast<guint8*>(&bits), reinterpret_cast<guint8*>(&bits) + 4);
    }
  }
  gst_video_region_of_interest_meta_add_param(
      roi, gst_structure_new("detection_landmarks", "format", G_TYPE_STRING, "landmark_points", "data_buffer",
                             G_TYPE_VARIANT, g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, le.data(), le.size(), 1),
                             nullptr));
  const std::vector<Point2> points = api_points(foreign);
  ASSERT_EQ(points.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(points[i].x, kTurned.apply(tmpl[i]).x, 1e-3) << "float32 fractions of the box, point " << i;
    EXPECT_NEAR(points[i].y, kTurned.apply(tmpl[i]).y, 1e-3) << "point " << i;
  }
  expect_same_alignment(foreign, frame_with_face(kTurned), points);
}

TEST_F(SameFaceTest, FacedetectEyePair) {
  GstBuffer* foreign = frame_with_face(kUpright);
  GstVideoRegionOfInterestMeta* roi = only_roi(foreign);
  gst_taconite_roi_remove_param(roi, "landmarks");
  // The upright template's eyes are at about (138.3, 111.7) and (173.5, 111.5).
  gst_video_region_of_interest_meta_add_param(
      roi, gst_structure_new("face", "eyes->x", G_TYPE_UINT, 121u, "eyes->y", G_TYPE_UINT, 102u, "eyes->width",
                             G_TYPE_UINT, 70u, "eyes->height", G_TYPE_UINT, 20u, nullptr));
  const std::vector<Point2> points = api_points(foreign);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].x, 121 + 17.5);
  EXPECT_EQ(points[1].x, 121 + 52.5);
  EXPECT_EQ(points[1].y, 112);
  expect_same_alignment(foreign, frame_with_face(kUpright), points);
}

TEST(AlignmentElement, BoxWithoutLandmarksIsNotAligned) {
  auto engine = install_fake_engine();
  GstHarness* h = adaface_harness({{"bundle", "fake"}, {"input-mode", "rois"}});
  gst_harness_set_src_caps_str(h, kFrameCaps);
  GstBuffer* in = rgb_buffer(kFrameW, kFrameH, [](int x, int y) { return face_at(x - 100, y - 60); });
  gst_buffer_add_video_region_of_interest_meta(in, "face", 100, 60, 112, 112);
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  ASSERT_NE(out, nullptr);
  GstTaconiteEmbeddingMeta* meta = gst_buffer_get_taconite_embedding_meta(out);
  ASSERT_NE(meta, nullptr);
  EXPECT_FALSE(meta->aligned);
  gst_buffer_unref(out);
  gst_harness_teardown(h);
  uninstall_fake_engine();
}

// Landmarks that cannot be a face: not finite, far outside the frame, eyes (almost) on one
// spot, or a face spanning far more than the frame. Each falls back to the box crop, unaligned.
struct AbsurdLandmarks {
  const char* name;
  std::vector<double> xs, ys;
};

void PrintTo(const AbsurdLandmarks& c, std::ostream* os) { *os << c.name; }

class AbsurdLandmarksTest : public ::testing::TestWithParam<AbsurdLandmarks> {
 protected:
  void SetUp() override { engine = install_fake_engine(); }
  void TearDown() override {
    for (GstBuffer* b : outputs) gst_buffer_unref(b);
    uninstall_fake_engine();
  }
  // Embeds the face box (100,60) 112x112 of a frame, with `landmarks` in its params when given.
  GstTaconiteEmbeddingMeta* embed(const AbsurdLandmarks* landmarks) {
    GstBuffer* in = rgb_buffer(kFrameW, kFrameH, [](int x, int y) { return face_at(x - 100, y - 60); });
    GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(in, "face", 100, 60, 112, 112);
    if (landmarks) {
      GstStructure* s = gst_structure_new_empty("landmarks");
      for (const auto& [field, values] : {std::pair{"x", &landmarks->xs}, std::pair{"y", &landmarks->ys}}) {
        GValue array = G_VALUE_INIT;
        gst_value_array_init(&array, static_cast<guint>(values->size()));
        for (double v : *values) {
          GValue item = G_VALUE_INIT;
          g_value_init(&item, G_TYPE_DOUBLE);
          g_value_set_double(&item, v);
          gst_value_array_append_and_take_value(&array, &item);
        }
        gst_structure_take_value(s, field, &array);
      }
      gst_video_region_of_interest_meta_add_param(roi, s);
    }
    GstHarness* h = adaface_harness({{"bundle", "fake"}});
    gst_harness_set_src_caps_str(h, kFrameCaps);
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    gst_harness_teardown(h);
    if (!out) return nullptr;
    outputs.push_back(out);
    return gst_buffer_get_taconite_embedding_meta(out);
  }
  std::shared_ptr<FakeEngineState> engine;
  std::vector<GstBuffer*> outputs;
};

TEST_P(AbsurdLandmarksTest, FallBackToTheBoxCropUnaligned) {
  const AbsurdLandmarks& landmarks = GetParam();
  GstTaconiteEmbeddingMeta* box = embed(nullptr);
  GstTaconiteEmbeddingMeta* absurd = embed(&landmarks);
  ASSERT_NE(box, nullptr);
  ASSERT_NE(absurd, nullptr);
  EXPECT_FALSE(absurd->aligned);
  EXPECT_EQ(absurd->status, GST_TACONITE_EMBEDDING_COMPUTED);
  ASSERT_EQ(engine->faces_seen(), 2u);
  EXPECT_EQ(engine->inputs[1], engine->inputs[0]) << "the engine saw the box crop";
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

INSTANTIATE_TEST_SUITE_P(
    Landmarks, AbsurdLandmarksTest,
    ::testing::Values(AbsurdLandmarks{"NaN", {140, kNaN, 156, 142, 170}, {110, 110, 130, 150, 150}},
                      AbsurdLandmarks{"Infinite", {140, 180}, {110, kInf}},
                      AbsurdLandmarks{"FarOutsideTheFrame", {140, 1e9, 156, 142, 170}, {110, 110, 130, 150, 150}},
                      AbsurdLandmarks{"EyesOnOneSpot", {150, 150.5}, {110, 110}},
                      AbsurdLandmarks{"FaceFarLargerThanTheFrame", {-300, 600}, {110, 110}}),
    [](const auto& info) { return std::string(info.param.name); });

std::vector<float> real_embedding(GstBuffer* in) {
  GstHarness* h = adaface_harness({{"bundle", test_bundle()}, {"backend", test_backend()}, {"input-mode", "rois"}});
  gst_harness_set_src_caps_str(h, kFrameCaps);
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  std::vector<float> e;
  if (GstTaconiteEmbeddingMeta* meta = out ? gst_buffer_get_taconite_embedding_meta(out) : nullptr) {
    EXPECT_TRUE(meta->aligned);
    e.assign(meta->embedding, meta->embedding + meta->dim);
  }
  if (out) gst_buffer_unref(out);
  gst_harness_teardown(h);
  return e;
}

TEST(AlignmentEngineTest, RotatedScaledFaceEmbedsLikeTheUprightOne) {
  if (test_bundle().empty()) GTEST_SKIP() << "TACONITE_TEST_BUNDLE not set (meson test sets it)";
  const std::vector<float> upright = real_embedding(frame_with_face(kUpright));
  const std::vector<float> turned = real_embedding(frame_with_face(kTurned));
  ASSERT_EQ(upright.size(), 512u);
  ASSERT_EQ(turned.size(), 512u);
  double dot = 0;
  for (std::size_t i = 0; i < upright.size(); ++i) dot += static_cast<double>(upright[i]) * turned[i];
  EXPECT_GE(dot, 0.999) << "cosine of unit embeddings";
}

}  // namespace

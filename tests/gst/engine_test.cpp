// With the real runtime and a generated IR-tiny bundle: the element's metadata equals what the
// runtime computes directly for the same crop, in either channel order, in a real pipeline.
#include <cmath>
#include <string>

#include "gst_test_support.hpp"
#include "taconite/embedder.hpp"

namespace {

using namespace gsttest;

std::array<std::uint8_t, 3> face_like(int x, int y) {
  const double r = std::hypot(x - 56.0, y - 60.0);
  return {static_cast<std::uint8_t>(r < 40 ? 210 - r : 40), static_cast<std::uint8_t>(120 + (x * 3) % 60),
          static_cast<std::uint8_t>((y * 5) % 256)};
}

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test_bundle().empty()) GTEST_SKIP() << "TACONITE_TEST_BUNDLE not set (meson test sets it)";
    // A missing bundle would fail READY->PAUSED, which GstHarness treats as fatal.
    ASSERT_TRUE(g_file_test((test_bundle() + "/manifest.txt").c_str(), G_FILE_TEST_EXISTS))
        << "no bundle at " << test_bundle() << " (build the gst-test-bundle target)";
  }

  // The element's embedding of one 112x112 RGB crop.
  std::vector<float> element_embedding(const char* channel_order, double* norm) {
    GstHarness* h = adaface_harness({{"bundle", test_bundle()}, {"backend", test_backend()},
                                     {"input-mode", "crops"}, {"channel-order", channel_order}});
    gst_harness_set_src_caps_str(h, "video/x-raw,format=RGB,width=112,height=112,framerate=30/1");
    GstBuffer* out = gst_harness_push_and_pull(h, rgb_buffer(112, 112, face_like));
    std::vector<float> e;
    if (GstTaconiteEmbeddingMeta* meta = out ? gst_buffer_get_taconite_embedding_meta(out) : nullptr) {
      e.assign(meta->embedding, meta->embedding + meta->dim);
      *norm = meta->norm;
      EXPECT_STREQ(meta->backend, test_backend().c_str());
      EXPECT_STREQ(meta->model, "IR-tiny");
    }
    if (out) gst_buffer_unref(out);
    gst_harness_teardown(h);
    return e;
  }

  // The runtime's own result for the same pixels, preprocessed independently of the element.
  std::vector<float> direct_embedding(bool bgr) {
    taconite::LoadOptions options;
    options.backend = test_backend();
    auto embedder = taconite::IrEmbedder::load(test_bundle(), options);
    EXPECT_TRUE(embedder.ok()) << embedder.error().message;
    if (!embedder) return {};
    const std::vector<float> chw = expected_chw(112, 112, face_like, bgr);
    auto e = embedder.value().embed({chw, 3, 112, 112});
    EXPECT_TRUE(e.ok());
    return e ? e.value() : std::vector<float>{};
  }
};

double norm_of(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += static_cast<double>(x) * x;
  return std::sqrt(s);
}

TEST_F(EngineTest, CropMatchesDirectRuntimeResult) {
  double norm = 0;
  const std::vector<float> meta = element_embedding("rgb", &norm);
  const std::vector<float> direct = direct_embedding(false);
  ASSERT_EQ(meta.size(), 512u);
  ASSERT_EQ(direct.size(), 512u);
  EXPECT_GE(taconite::cosine(meta, direct), 0.99999);
  EXPECT_NEAR(norm, norm_of(direct), 1e-5 * norm_of(direct)) << "the meta keeps the raw norm";
  EXPECT_NEAR(norm_of(meta), 1.0, 1e-5) << "the meta's embedding is L2-normalised";
}

TEST_F(EngineTest, ChannelOrderBgrFeedsSwappedPlanes) {
  double norm = 0;
  const std::vector<float> bgr = element_embedding("bgr", &norm);
  ASSERT_EQ(bgr.size(), 512u);
  EXPECT_GE(taconite::cosine(bgr, direct_embedding(true)), 0.99999);
  EXPECT_LT(taconite::cosine(bgr, direct_embedding(false)), 0.99999) << "the two orders must differ on a colour face";
}

// The precision that ran is reported next to the backend: in the meta, the ROI's params and the frame message.
TEST_F(EngineTest, RoiParamsAndMessageNameThePrecisionThatRan) {
  taconite::LoadOptions options;
  options.backend = test_backend();
  auto direct = taconite::IrEmbedder::load(test_bundle(), options);
  ASSERT_TRUE(direct.ok()) << direct.error().message;
  const std::string precision = direct.value().precision();
  ASSERT_FALSE(precision.empty());

  GstHarness* h = adaface_harness({{"bundle", test_bundle()}, {"backend", test_backend()},
                                   {"input-mode", "rois"}, {"post-messages", "true"}});
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(h->element, bus);
  gst_harness_set_src_caps_str(h, "video/x-raw,format=RGB,width=112,height=112,framerate=30/1");
  GstBuffer* in = rgb_buffer(112, 112, face_like);
  gst_buffer_add_video_region_of_interest_meta(in, "face", 8, 8, 96, 96);
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  ASSERT_NE(out, nullptr);
  auto* roi = reinterpret_cast<GstVideoRegionOfInterestMeta*>(
      gst_buffer_get_meta(out, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE));
  ASSERT_NE(roi, nullptr);
  const GstStructure* params = gst_video_region_of_interest_meta_get_param(roi, GST_TACONITE_EMBEDDING_PARAMS_NAME);
  ASSERT_NE(params, nullptr);
  EXPECT_STREQ(gst_structure_get_string(params, "backend"), test_backend().c_str());
  EXPECT_STREQ(gst_structure_get_string(params, "precision"), precision.c_str());
  const GstTaconiteEmbeddingMeta* meta = gst_buffer_get_taconite_embedding_meta(out);
  ASSERT_NE(meta, nullptr);
  EXPECT_STREQ(meta->precision, precision.c_str());
  GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT);
  ASSERT_NE(msg, nullptr);
  EXPECT_STREQ(gst_structure_get_string(gst_message_get_structure(msg), "precision"), precision.c_str());
  gst_message_unref(msg);
  gst_buffer_unref(out);
  gst_element_set_bus(h->element, nullptr);
  gst_object_unref(bus);
  gst_harness_teardown(h);
}

// The precision property reaches the cpu backend (int8 runs and is reported); where the backend
// runs other numerics the element says the property is not used.
struct PrecisionRun {
  std::string precision;  // the first frame's meta's
  std::vector<std::string> warnings;
};

PrecisionRun run_with_precision(const std::string& backend, const char* precision) {
  gchar* launch = g_strdup_printf(
      "videotestsrc num-buffers=2 pattern=smpte ! video/x-raw,width=112,height=112 ! videoconvert ! "
      "video/x-raw,format=RGB ! taconiteadaface bundle=%s backend=%s precision=%s input-mode=crops ! "
      "appsink name=out sync=false",
      test_bundle().c_str(), backend.c_str(), precision);
  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launch(launch, &error);
  g_free(launch);
  PrecisionRun run;
  EXPECT_NE(pipeline, nullptr) << (error ? error->message : "");
  if (pipeline == nullptr) return run;
  GstElement* appsink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  EXPECT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  for (GstSample* sample = nullptr; (g_signal_emit_by_name(appsink, "pull-sample", &sample), sample);) {
    const GstTaconiteEmbeddingMeta* meta = gst_buffer_get_taconite_embedding_meta(gst_sample_get_buffer(sample));
    if (meta != nullptr && run.precision.empty() && meta->precision != nullptr) run.precision = meta->precision;
    gst_sample_unref(sample);
  }
  GstBus* bus = gst_element_get_bus(pipeline);
  while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING)) {
    GError* warning = nullptr;
    gst_message_parse_warning(m, &warning, nullptr);
    run.warnings.emplace_back(warning->message);
    g_error_free(warning);
    gst_message_unref(m);
  }
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(appsink);
  gst_object_unref(pipeline);
  return run;
}

TEST_F(EngineTest, PrecisionPropertyRunsInt8OnTheCpuBackend) {
  if (test_backend() != "cpu") GTEST_SKIP() << "no cpu backend (oneDNN) in this build";
  const PrecisionRun run = run_with_precision("cpu", "int8");
  EXPECT_EQ(run.precision, "int8");
  EXPECT_TRUE(run.warnings.empty()) << run.warnings.front();
}

TEST_F(EngineTest, APrecisionTheBackendDoesNotRunIsWarnedAbout) {
  const PrecisionRun run = run_with_precision("cpu-reference", "int8");
  EXPECT_EQ(run.precision, "bf16-exact");
  ASSERT_EQ(run.warnings.size(), 1u);
  EXPECT_EQ(run.warnings[0], "precision=int8 is not used: the engine runs bf16-exact on backend cpu-reference.");
}

TEST_F(EngineTest, PipelineWithVideotestsrcVideoconvertVideoscale) {
  gchar* launch = g_strdup_printf(
      "videotestsrc num-buffers=3 pattern=smpte ! video/x-raw,width=160,height=120 ! videoconvert ! videoscale ! "
      "video/x-raw,format=NV12,width=112,height=112 ! taconiteadaface name=t bundle=%s backend=%s input-mode=crops ! "
      "appsink name=out sync=false",
      test_bundle().c_str(), test_backend().c_str());
  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launch(launch, &error);
  g_free(launch);
  ASSERT_NE(pipeline, nullptr);
  GstElement* appsink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  ASSERT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  int frames = 0;
  for (GstSample* sample = nullptr; (g_signal_emit_by_name(appsink, "pull-sample", &sample), sample);) {
    GstTaconiteEmbeddingMeta* meta = gst_buffer_get_taconite_embedding_meta(gst_sample_get_buffer(sample));
    ASSERT_NE(meta, nullptr);
    EXPECT_EQ(meta->dim, 512u);
    EXPECT_GT(meta->norm, 0.0);
    gst_sample_unref(sample);
    ++frames;
  }
  EXPECT_EQ(frames, 3);
  GstElement* t = gst_bin_get_by_name(GST_BIN(pipeline), "t");
  guint64 faces = 0;
  g_object_get(t, "faces-embedded", &faces, nullptr);
  EXPECT_EQ(faces, 3u);
  gst_object_unref(t);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(appsink);
  gst_object_unref(pipeline);
}

}  // namespace

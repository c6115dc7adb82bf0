// Hostile values at the elements' edges: no C++ exception crosses into GStreamer's C code (the
// shared guards), and a raw embedding holding an infinity is never published as NaN.
#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>

#include "cxx_boundary.hpp"
#include "embedding_output.hpp"
#include "gst_test_support.hpp"

namespace {

using namespace gsttest;

// The ERROR messages an element posted on `bus`, as "message | debug" texts.
std::vector<std::string> errors_on(GstBus* bus) {
  std::vector<std::string> texts;
  while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
    GError* error = nullptr;
    gchar* debug = nullptr;
    gst_message_parse_error(m, &error, &debug);
    texts.push_back(std::string(error->message) + " | " + (debug ? debug : ""));
    g_clear_error(&error);
    g_free(debug);
    gst_message_unref(m);
  }
  return texts;
}

// taconitetrack has no input that makes OpenCV or dlib throw (boxes are clipped to the frame,
// ROIs and tracks bounded), so its guards are tested as they are used: each turns an exception
// of any kind into an element error naming what failed and the value GStreamer expects.
TEST(CxxBoundary, EveryGuardTurnsAnExceptionIntoAnElementError) {
  GstElement* element = gst_element_factory_make("taconitetrack", nullptr);
  ASSERT_NE(element, nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(element, bus);
  using namespace taconite::gst;
  EXPECT_EQ(flow_guarded(element, "tracking failed", []() -> GstFlowReturn { throw std::bad_alloc(); }),
            GST_FLOW_ERROR);
  EXPECT_EQ(bool_guarded(element, "caps failed", []() -> bool { throw std::runtime_error("cv::Exception-like"); }),
            FALSE);
  EXPECT_EQ(state_change_guarded(element, "start failed", []() -> GstStateChangeReturn { throw 42; }),
            GST_STATE_CHANGE_FAILURE);
  EXPECT_EQ(flow_guarded(element, "unused", [] { return GST_FLOW_EOS; }), GST_FLOW_EOS) << "results pass through";
  const std::vector<std::string> errors = errors_on(bus);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_NE(errors[0].find("tracking failed"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("bad_alloc"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("cv::Exception-like"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("unknown C++ exception"), std::string::npos) << errors[2];
  gst_element_set_bus(element, nullptr);
  gst_object_unref(bus);
  gst_object_unref(element);
}

TEST(NonFiniteEmbedding, NormalisingRefusesInfinityAndNaN) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  std::vector<float> unit{1.0f};
  EXPECT_FALSE(taconite::gst::l2_normalise({inf, 1.0f}, unit));
  EXPECT_TRUE(unit.empty()) << "no NaN (Inf / Inf) is left behind";
  EXPECT_FALSE(taconite::gst::l2_normalise({1.0f, -inf}, unit));
  EXPECT_FALSE(taconite::gst::l2_normalise({std::nanf(""), 1.0f}, unit));
  const std::optional<double> norm = taconite::gst::l2_normalise({3.0f, 4.0f}, unit);
  ASSERT_TRUE(norm);
  EXPECT_DOUBLE_EQ(*norm, 5.0);
  EXPECT_EQ(unit, (std::vector<float>{0.6f, 0.8f}));
  // The largest finite floats: their squares overflow a float, not the double sum.
  const float big = std::numeric_limits<float>::max();
  ASSERT_TRUE(taconite::gst::l2_normalise({big, big}, unit));
  for (float v : unit) EXPECT_TRUE(std::isfinite(v));
  EXPECT_EQ(taconite::gst::l2_normalise({0.0f, 0.0f}, unit), 0.0);
  EXPECT_EQ(unit, (std::vector<float>{0.0f, 0.0f}));
}

// An engine whose output overflows: every face is passed on as skipped (no embedding, a finite
// norm), counted, and reported once per stream by a warning, never as NaN values.
TEST(NonFiniteEmbedding, AnInfiniteRawEmbeddingIsSkippedWithOneWarning) {
  std::shared_ptr<FakeEngineState> engine = install_fake_engine();
  engine->infinite = true;
  GstHarness* h = adaface_harness({{"bundle", "fake"}, {"input-mode", "rois"}, {"post-messages", "true"}});
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(h->element, bus);
  gst_harness_set_src_caps_str(h, kRgbCaps);
  for (int i = 0; i < 3; ++i) {
    GstBuffer* in = stream_frame(i);
    gst_buffer_add_video_region_of_interest_meta(in, "face", 20, 20, 60, 60);
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    ASSERT_NE(out, nullptr);
    const std::vector<GstTaconiteEmbeddingMeta*> metas = embedding_metas(out);
    ASSERT_EQ(metas.size(), 1u);
    EXPECT_EQ(metas[0]->status, GST_TACONITE_EMBEDDING_SKIPPED);
    EXPECT_EQ(metas[0]->dim, 0u);
    EXPECT_TRUE(std::isfinite(metas[0]->norm));
    gst_buffer_unref(out);
  }
  EXPECT_EQ(counter(h->element, "faces-skipped"), 3u);
  EXPECT_EQ(counter(h->element, "faces-embedded"), 0u);
  std::size_t messages = 0, warnings = 0, errors = 0;
  while (GstMessage* m = gst_bus_pop(bus)) {
    warnings += GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING;
    errors += GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ELEMENT) {
      const GValue* faces = gst_structure_get_value(gst_message_get_structure(m), "faces");
      ASSERT_NE(faces, nullptr);
      ASSERT_EQ(gst_value_list_get_size(faces), 1u);
      const GstStructure* face = gst_value_get_structure(gst_value_list_get_value(faces, 0));
      EXPECT_STREQ(gst_structure_get_string(face, "status"), "skipped");
      double norm = -1;
      EXPECT_TRUE(gst_structure_get_double(face, "norm", &norm));
      EXPECT_TRUE(std::isfinite(norm));
      ++messages;
    }
    gst_message_unref(m);
  }
  EXPECT_EQ(messages, 3u);
  EXPECT_EQ(warnings, 1u) << "one warning per stream, not one per face";
  EXPECT_EQ(errors, 0u);

  engine->infinite = false;  // the engine recovers: faces are embedded again
  GstBuffer* in = stream_frame(3);
  gst_buffer_add_video_region_of_interest_meta(in, "face", 20, 20, 60, 60);
  GstBuffer* out = gst_harness_push_and_pull(h, in);
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(embedding_metas(out).size(), 1u);
  EXPECT_EQ(embedding_metas(out)[0]->status, GST_TACONITE_EMBEDDING_COMPUTED);
  EXPECT_EQ(embedding_metas(out)[0]->dim, 512u);
  gst_buffer_unref(out);
  gst_element_set_bus(h->element, nullptr);
  gst_object_unref(bus);
  gst_harness_teardown(h);
  uninstall_fake_engine();
}

}  // namespace

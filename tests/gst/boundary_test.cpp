// Hostile values at the elements' edges: a raw embedding holding an infinity is never published as NaN.
#include <cmath>
#include <limits>

#include "embedding_output.hpp"
#include "gst_test_support.hpp"

namespace {

using namespace gsttest;

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

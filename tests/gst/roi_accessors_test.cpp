// gsttaconitemeta-1.0's typed ROI reads (gst/taconite/gsttaconiteroi.h): on ROIs built by hand in
// every encoding the elements (and foreign writers) use, and on what taconitetrack writes.
#include <gst/taconite/gsttaconiteroi.h>

#include <vector>

#include "gst_test_support.hpp"

namespace {

GstBuffer* empty_frame() { return gst_buffer_new_allocate(nullptr, 64, nullptr); }

GstVideoRegionOfInterestMeta* add_face(GstBuffer* buffer, gint id, GstStructure* param = nullptr) {
  GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(buffer, "face", 10, 20, 40, 50);
  roi->id = id;
  if (param) gst_video_region_of_interest_meta_add_param(roi, param);
  return roi;
}

GValue numbers(const std::vector<double>& values, bool list = false) {
  GValue out = G_VALUE_INIT;
  list ? gst_value_list_init(&out, values.size()) : gst_value_array_init(&out, values.size());
  for (double v : values) {
    GValue d = G_VALUE_INIT;
    g_value_init(&d, G_TYPE_DOUBLE);
    g_value_set_double(&d, v);
    list ? gst_value_list_append_and_take_value(&out, &d) : gst_value_array_append_and_take_value(&out, &d);
  }
  return out;
}

GstStructure* landmarks(const std::vector<double>& x, const std::vector<double>& y, bool normalized = false,
                        bool list = false) {
  GstStructure* s = gst_structure_new("landmarks", "normalized", G_TYPE_BOOLEAN, normalized, nullptr);
  GValue xs = numbers(x, list), ys = numbers(y, list);
  gst_structure_take_value(s, "x", &xs);
  gst_structure_take_value(s, "y", &ys);
  return s;
}

TEST(RoiAccessors, TrackIdIsReadAsIntOrInt64AndAbsentIsFalse) {
  GstBuffer* buffer = empty_frame();
  GstVideoRegionOfInterestMeta* small =
      add_face(buffer, 1, gst_structure_new("object_id", "id", G_TYPE_INT, 7, nullptr));
  const gint64 big_id = G_GINT64_CONSTANT(1) << 40;
  GstVideoRegionOfInterestMeta* big =
      add_face(buffer, 2, gst_structure_new("object_id", "id", G_TYPE_INT64, big_id, nullptr));
  GstVideoRegionOfInterestMeta* none = add_face(buffer, 3);
  GstVideoRegionOfInterestMeta* text =
      add_face(buffer, 4, gst_structure_new("object_id", "id", G_TYPE_STRING, "7", nullptr));
  gint64 id = -5;
  EXPECT_TRUE(gst_taconite_roi_get_track_id(small, &id));
  EXPECT_EQ(id, 7);
  EXPECT_TRUE(gst_taconite_roi_get_track_id(big, &id));
  EXPECT_EQ(id, big_id);
  id = -5;
  EXPECT_FALSE(gst_taconite_roi_get_track_id(none, &id));
  EXPECT_FALSE(gst_taconite_roi_get_track_id(text, &id));
  EXPECT_EQ(id, -5);
  EXPECT_FALSE(gst_taconite_roi_get_track_id(nullptr, &id));
  EXPECT_TRUE(gst_taconite_roi_get_track_id(small, nullptr));
  gst_buffer_unref(buffer);
}

TEST(RoiAccessors, TrackUidIsTheObjectIdParamsUidStringAndAbsentIsNull) {
  GstBuffer* buffer = empty_frame();
  GstVideoRegionOfInterestMeta* with_uid = add_face(
      buffer, 1, gst_structure_new("object_id", "id", G_TYPE_INT, 7, "uid", G_TYPE_STRING, "a-uid", nullptr));
  GstVideoRegionOfInterestMeta* id_only = add_face(buffer, 2, gst_structure_new("object_id", "id", G_TYPE_INT, 8, nullptr));
  GstVideoRegionOfInterestMeta* empty_uid = add_face(
      buffer, 3, gst_structure_new("object_id", "id", G_TYPE_INT, 9, "uid", G_TYPE_STRING, "", nullptr));
  GstVideoRegionOfInterestMeta* number_uid = add_face(
      buffer, 4, gst_structure_new("object_id", "id", G_TYPE_INT, 10, "uid", G_TYPE_INT, 5, nullptr));
  EXPECT_STREQ(gst_taconite_roi_get_track_uid(with_uid), "a-uid");
  EXPECT_EQ(gst_taconite_roi_get_track_uid(id_only), nullptr);
  EXPECT_EQ(gst_taconite_roi_get_track_uid(empty_uid), nullptr);
  EXPECT_EQ(gst_taconite_roi_get_track_uid(number_uid), nullptr);
  EXPECT_EQ(gst_taconite_roi_get_track_uid(nullptr), nullptr);
  gst_buffer_unref(buffer);
}

TEST(RoiAccessors, IdentityReadsEveryLabelState) {
  GstBuffer* buffer = empty_frame();
  GstVideoRegionOfInterestMeta* none = add_face(buffer, 1);
  GstVideoRegionOfInterestMeta* pending =
      add_face(buffer, 2, gst_structure_new("identity", "label_state", G_TYPE_STRING, "pending", nullptr));
  GstVideoRegionOfInterestMeta* known = add_face(
      buffer, 3, gst_structure_new("identity", "label_state", G_TYPE_STRING, "known", "label", G_TYPE_STRING, "alice",
                                   "label_id", G_TYPE_INT, 4, "confidence", G_TYPE_DOUBLE, 0.75, nullptr));
  GstVideoRegionOfInterestMeta* unknown = add_face(
      buffer, 4, gst_structure_new("identity", "label_state", G_TYPE_STRING, "unknown", "label", G_TYPE_STRING,
                                   "unknown", "label_id", G_TYPE_INT, -1, "confidence", G_TYPE_DOUBLE, 0.1, nullptr));
  // Written before label_state existed: a label is a decision, -1 is unknown.
  GstVideoRegionOfInterestMeta* legacy = add_face(
      buffer, 5, gst_structure_new("identity", "label", G_TYPE_STRING, "bob", "label_id", G_TYPE_INT, 2, nullptr));
  GstVideoRegionOfInterestMeta* legacy_unknown = add_face(
      buffer, 6, gst_structure_new("identity", "label", G_TYPE_STRING, "unknown", "label_id", G_TYPE_INT, -1, nullptr));

  EXPECT_EQ(gst_taconite_roi_get_label_state(none), GST_TACONITE_LABEL_STATE_NONE);
  EXPECT_EQ(gst_taconite_roi_get_label_state(nullptr), GST_TACONITE_LABEL_STATE_NONE);
  EXPECT_EQ(gst_taconite_roi_get_label_state(pending), GST_TACONITE_LABEL_STATE_PENDING);
  EXPECT_EQ(gst_taconite_roi_get_label_state(known), GST_TACONITE_LABEL_STATE_KNOWN);
  EXPECT_EQ(gst_taconite_roi_get_label_state(unknown), GST_TACONITE_LABEL_STATE_UNKNOWN);
  EXPECT_EQ(gst_taconite_roi_get_label_state(legacy), GST_TACONITE_LABEL_STATE_KNOWN);
  EXPECT_EQ(gst_taconite_roi_get_label_state(legacy_unknown), GST_TACONITE_LABEL_STATE_UNKNOWN);

  EXPECT_EQ(gst_taconite_roi_get_label(pending), nullptr);
  EXPECT_EQ(gst_taconite_roi_get_label(none), nullptr);
  EXPECT_STREQ(gst_taconite_roi_get_label(known), "alice");
  EXPECT_STREQ(gst_taconite_roi_get_label(unknown), "unknown");
  gint label_id = 0;
  EXPECT_FALSE(gst_taconite_roi_get_label_id(pending, &label_id));
  EXPECT_TRUE(gst_taconite_roi_get_label_id(known, &label_id));
  EXPECT_EQ(label_id, 4);
  EXPECT_TRUE(gst_taconite_roi_get_label_id(unknown, &label_id));
  EXPECT_EQ(label_id, -1);
  double confidence = 0;
  EXPECT_FALSE(gst_taconite_roi_get_confidence(pending, &confidence));
  EXPECT_FALSE(gst_taconite_roi_get_confidence(none, &confidence));
  EXPECT_TRUE(gst_taconite_roi_get_confidence(known, &confidence));
  EXPECT_DOUBLE_EQ(confidence, 0.75);
  gst_buffer_unref(buffer);
}

TEST(RoiAccessors, LabelStateIsARegisteredEnumWithTheJsonSpelling) {
  GEnumClass* klass = G_ENUM_CLASS(g_type_class_ref(GST_TACONITE_TYPE_LABEL_STATE));
  ASSERT_NE(klass, nullptr);
  EXPECT_STREQ(g_type_name(GST_TACONITE_TYPE_LABEL_STATE), "GstTaconiteLabelState");
  EXPECT_EQ(klass->n_values, 4u);
  EXPECT_STREQ(g_enum_get_value(klass, GST_TACONITE_LABEL_STATE_PENDING)->value_nick, "pending");
  g_type_class_unref(klass);
  EXPECT_STREQ(gst_taconite_label_state_to_string(GST_TACONITE_LABEL_STATE_NONE), "none");
  EXPECT_STREQ(gst_taconite_label_state_to_string(GST_TACONITE_LABEL_STATE_PENDING), "pending");
  EXPECT_STREQ(gst_taconite_label_state_to_string(GST_TACONITE_LABEL_STATE_KNOWN), "known");
  EXPECT_STREQ(gst_taconite_label_state_to_string(GST_TACONITE_LABEL_STATE_UNKNOWN), "unknown");
  EXPECT_STREQ(gst_taconite_label_state_to_string(static_cast<GstTaconiteLabelState>(99)), "none");
}

TEST(RoiAccessors, LandmarksInFramePixelsFromArraysListsAndNormalizedPoints) {
  GstBuffer* buffer = empty_frame();  // every ROI: x 10, y 20, 40 x 50
  GstVideoRegionOfInterestMeta* pixels =
      add_face(buffer, 1, landmarks({11, 12, 13, 14, 15}, {21, 22, 23, 24, 25}));
  GstVideoRegionOfInterestMeta* list = add_face(buffer, 2, landmarks({1, 2}, {3, 4}, false, true));
  GstVideoRegionOfInterestMeta* normalized = add_face(buffer, 3, landmarks({0.5, 1.0}, {0.0, 0.5}, true));
  GstVideoRegionOfInterestMeta* uneven = add_face(buffer, 4, landmarks({1, 2, 3}, {1, 2}));
  GstVideoRegionOfInterestMeta* none = add_face(buffer, 5);
  GstStructure* words = gst_structure_new("landmarks", "x", G_TYPE_STRING, "1,2", "y", G_TYPE_STRING, "3,4", nullptr);
  GstVideoRegionOfInterestMeta* text = add_face(buffer, 6, words);
  std::vector<double> huge(5000, 1.0);
  GstVideoRegionOfInterestMeta* too_many = add_face(buffer, 7, landmarks(huge, huge));

  gdouble *x = nullptr, *y = nullptr;
  guint n = 99;
  ASSERT_TRUE(gst_taconite_roi_get_landmarks(pixels, &x, &y, &n));
  ASSERT_EQ(n, 5u);
  EXPECT_EQ(x[4], 15.0);
  EXPECT_EQ(y[0], 21.0);
  g_free(x);
  g_free(y);
  ASSERT_TRUE(gst_taconite_roi_get_landmarks(list, &x, &y, &n));
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(y[1], 4.0);
  g_free(x);
  g_free(y);
  ASSERT_TRUE(gst_taconite_roi_get_landmarks(normalized, &x, &y, &n));
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(x[0], 30.0);  // 10 + 0.5 * 40
  EXPECT_EQ(x[1], 50.0);
  EXPECT_EQ(y[0], 20.0);
  EXPECT_EQ(y[1], 45.0);  // 20 + 0.5 * 50
  g_free(x);
  g_free(y);
  for (GstVideoRegionOfInterestMeta* bad : {uneven, none, text, too_many}) {
    n = 99;
    EXPECT_FALSE(gst_taconite_roi_get_landmarks(bad, &x, &y, &n)) << bad->id;
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(x, nullptr);
    EXPECT_EQ(y, nullptr);
  }
  EXPECT_TRUE(gst_taconite_roi_get_landmarks(pixels, nullptr, nullptr, &n));  // only the count
  EXPECT_EQ(n, 5u);
  gst_buffer_unref(buffer);
}

TEST(RoiAccessors, EmbeddingOfARoiIsFoundByItsIdUnlessTheIdIsShared) {
  GstBuffer* buffer = empty_frame();
  const std::vector<float> a = {1, 0, 0, 0}, b = {0, 1, 0, 0};
  GstVideoRegionOfInterestMeta* first = add_face(buffer, 1);
  GstVideoRegionOfInterestMeta* second = add_face(buffer, 2);
  GstVideoRegionOfInterestMeta* bare = add_face(buffer, 3);
  GstVideoRegionOfInterestMeta* shared1 = add_face(buffer, 0);
  add_face(buffer, 0);
  gst_buffer_add_taconite_embedding_meta(buffer, 2, b.data(), 4, 1.0, "IR-18", "cpu", TRUE);
  gst_buffer_add_taconite_embedding_meta(buffer, 1, a.data(), 4, 1.0, "IR-18", "cpu", TRUE);
  gst_buffer_add_taconite_embedding_meta(buffer, 0, a.data(), 4, 1.0, "IR-18", "cpu", TRUE);
  GstTaconiteEmbeddingMeta* e = gst_taconite_roi_get_embedding_meta(buffer, second);
  ASSERT_NE(e, nullptr);
  guint dim = 0;
  const gfloat* values = gst_taconite_embedding_meta_get_embedding(e, &dim);
  ASSERT_EQ(dim, 4u);
  EXPECT_EQ(values[1], 1.0f);
  ASSERT_NE(gst_taconite_roi_get_embedding_meta(buffer, first), nullptr);
  EXPECT_EQ(gst_taconite_roi_get_embedding_meta(buffer, first)->embedding[0], 1.0f);
  EXPECT_EQ(gst_taconite_roi_get_embedding_meta(buffer, bare), nullptr);
  EXPECT_EQ(gst_taconite_roi_get_embedding_meta(buffer, shared1), nullptr);

  GList* rois = gst_buffer_get_taconite_rois(buffer);
  ASSERT_EQ(g_list_length(rois), 5u);
  EXPECT_EQ(rois->data, first);
  EXPECT_EQ(rois->next->data, second);
  g_list_free(rois);
  gst_buffer_unref(buffer);
}

// What a real element writes: taconitetrack's ids read through the accessor.
TEST(RoiAccessors, TrackIdOfTaconitetrackIsRead) {
  GstHarness* h = gst_harness_new("taconitetrack");
  ASSERT_NE(h, nullptr);
  gst_util_set_object_arg(G_OBJECT(h->element), "min-hits", "1");
  gst_harness_set_src_caps_str(h, "video/x-raw,format=RGB,width=320,height=240,framerate=30/1");
  std::vector<gint64> ids;
  for (int i = 0; i < 3; ++i) {
    GstBuffer* in = gst_buffer_new_allocate(nullptr, 320 * 240 * 3, nullptr);
    gst_buffer_memset(in, 0, 0, 320 * 240 * 3);  // taconitetrack reads the pixels for scene cuts
    GST_BUFFER_PTS(in) = i * gsttest::kFrame;
    gst_buffer_add_video_region_of_interest_meta(in, "face", 100 + 2 * i, 80, 60, 60);
    GstBuffer* out = gst_harness_push_and_pull(h, in);
    ASSERT_NE(out, nullptr);
    GList* rois = gst_buffer_get_taconite_rois(out);
    ASSERT_EQ(g_list_length(rois), 1u);
    gint64 id = -1;
    if (gst_taconite_roi_get_track_id(static_cast<GstVideoRegionOfInterestMeta*>(rois->data), &id)) ids.push_back(id);
    g_list_free(rois);
    gst_buffer_unref(out);
  }
  gst_harness_teardown(h);
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[0], ids[2]);
  EXPECT_GE(ids[0], 1);
}

}  // namespace

// gsttaconitemeta-1.0's typed ROI reads (gst/taconite/gsttaconiteroi.h): on ROIs built by hand in
// every encoding the elements (and foreign writers) use, on hostile params (wrong types, NaN,
// million-element arrays, NULL), and on what taconitetrack writes.
#include <gst/taconite/gsttaconiteroi.h>

#include <cmath>
#include <cstring>
#include <limits>
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
  EXPECT_EQ(gst_taconite_roi_get_embedding_meta(buffer, nullptr), nullptr) << "a NULL ROI reads as absent";
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


constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An array (or list) field of `n` values of GType `type`, each `value` (converted).
GValue filled(GType type, guint n, double value, bool list = false) {
  GValue out = G_VALUE_INIT;
  list ? gst_value_list_init(&out, n) : gst_value_array_init(&out, n);
  for (guint i = 0; i < n; ++i) {
    GValue v = G_VALUE_INIT;
    g_value_init(&v, type);
    if (type == G_TYPE_DOUBLE) g_value_set_double(&v, value);
    if (type == G_TYPE_FLOAT) g_value_set_float(&v, static_cast<float>(value));
    if (type == G_TYPE_INT) g_value_set_int(&v, static_cast<gint>(value));
    if (type == G_TYPE_UINT) g_value_set_uint(&v, static_cast<guint>(value));
    if (type == G_TYPE_INT64) g_value_set_int64(&v, static_cast<gint64>(value));
    if (type == G_TYPE_UINT64) g_value_set_uint64(&v, static_cast<guint64>(value));
    if (type == G_TYPE_STRING) g_value_set_string(&v, "1");
    list ? gst_value_list_append_and_take_value(&out, &v) : gst_value_array_append_and_take_value(&out, &v);
  }
  return out;
}

GstStructure* with_fields(GstStructure* s, std::initializer_list<std::pair<const char*, GValue>> fields) {
  for (auto [name, value] : fields) gst_structure_take_value(s, name, &value);
  return s;
}

// A DL Streamer data_buffer: the floats as a GVariant byte string, little-endian.
GstStructure* data_buffer_points(const std::vector<float>& values) {
  std::vector<guint8> le(4 * values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    guint32 bits = 0;
    std::memcpy(&bits, &values[i], 4);
    bits = GUINT32_TO_LE(bits);
    std::memcpy(le.data() + 4 * i, &bits, 4);
  }
  GVariant* variant = g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, le.data(), le.size(), 1);
  return gst_structure_new("detection_landmarks", "format", G_TYPE_STRING, "landmark_points", "data_buffer",
                           G_TYPE_VARIANT, variant, nullptr);
}

// The points gst_taconite_roi_get_landmarks reads, as x0,y0,x1,y1,...; empty when it refuses.
std::vector<double> points_of(const GstVideoRegionOfInterestMeta* roi) {
  gdouble *x = nullptr, *y = nullptr;
  guint n = 0;
  std::vector<double> flat;
  if (!gst_taconite_roi_get_landmarks(roi, &x, &y, &n)) return flat;
  for (guint i = 0; i < n; ++i) flat.insert(flat.end(), {x[i], y[i]});
  g_free(x);
  g_free(y);
  return flat;
}

TEST(RoiAccessors, LandmarksOfEveryNumericTypeAndEncodingAreRead) {
  GstBuffer* buffer = empty_frame();  // every ROI: x 10, y 20, 40 x 50
  for (GType type : {G_TYPE_DOUBLE, G_TYPE_FLOAT, G_TYPE_INT, G_TYPE_UINT, G_TYPE_INT64, G_TYPE_UINT64}) {
    GstVideoRegionOfInterestMeta* roi = add_face(
        buffer, 1, with_fields(gst_structure_new_empty("landmarks"), {{"x", filled(type, 5, 12)}, {"y", filled(type, 5, 30)}}));
    EXPECT_EQ(points_of(roi), std::vector<double>({12, 30, 12, 30, 12, 30, 12, 30, 12, 30})) << g_type_name(type);
  }
  GstVideoRegionOfInterestMeta* data = add_face(
      buffer, 2, with_fields(gst_structure_new("x", "format", G_TYPE_STRING, "landmark_points", nullptr),
                             {{"data", filled(G_TYPE_DOUBLE, 4, 0.5, true)}}));
  EXPECT_EQ(points_of(data), std::vector<double>({30, 45, 30, 45})) << "DL Streamer data: fractions of the box";
  GstVideoRegionOfInterestMeta* bytes = add_face(buffer, 3, data_buffer_points({0.25f, 0.0f, 1.0f, 1.0f}));
  EXPECT_EQ(points_of(bytes), std::vector<double>({20, 20, 50, 70})) << "DL Streamer data_buffer";
  GstVideoRegionOfInterestMeta* eyes = add_face(
      buffer, 4, gst_structure_new("face", "eyes->x", G_TYPE_INT, 14, "eyes->y", G_TYPE_UINT, 30u, "eyes->width",
                                   G_TYPE_INT64, G_GINT64_CONSTANT(20), "eyes->height", G_TYPE_DOUBLE, 10.0, nullptr));
  EXPECT_EQ(points_of(eyes), std::vector<double>({19, 35, 29, 35})) << "facedetect's eye pair: 1/4 and 3/4 across";
  // The first param carrying points wins, whatever its encoding.
  GstVideoRegionOfInterestMeta* both = add_face(buffer, 5, data_buffer_points({0.0f, 0.0f, 0.0f, 0.0f}));
  gst_video_region_of_interest_meta_add_param(both, landmarks({1, 2}, {3, 4}));
  EXPECT_EQ(points_of(both), std::vector<double>({10, 20, 10, 20}));
  gst_buffer_unref(buffer);
}

TEST(RoiAccessors, HostileLandmarkParamsReadAsNoneWithoutReadingThem) {
  GstBuffer* buffer = empty_frame();
  const guint million = 1000000;
  const std::vector<GstStructure*> hostile = {
      with_fields(gst_structure_new_empty("landmarks"),
                  {{"x", filled(G_TYPE_DOUBLE, million, 1)}, {"y", filled(G_TYPE_DOUBLE, million, 1)}}),
      with_fields(gst_structure_new("p", "format", G_TYPE_STRING, "landmark_points", nullptr),
                  {{"data", filled(G_TYPE_DOUBLE, million, 0.5)}}),
      data_buffer_points(std::vector<float>(million, 0.5f)),
      with_fields(gst_structure_new_empty("landmarks"),
                  {{"x", filled(G_TYPE_STRING, 5, 0)}, {"y", filled(G_TYPE_STRING, 5, 0)}}),
      with_fields(gst_structure_new("p", "format", G_TYPE_STRING, "landmark_points", nullptr),
                  {{"data", filled(G_TYPE_DOUBLE, 5, 0.5)}}),  // an odd count: no pairs
      with_fields(gst_structure_new_empty("landmarks"),
                  {{"x", filled(G_TYPE_DOUBLE, 0, 0)}, {"y", filled(G_TYPE_DOUBLE, 0, 0)}}),
      gst_structure_new("landmarks", "x", G_TYPE_DOUBLE, 1.0, "y", G_TYPE_DOUBLE, 2.0, nullptr),  // not arrays
      gst_structure_new("p", "format", G_TYPE_INT, 3, "data_buffer", G_TYPE_STRING, "bytes", nullptr),
      gst_structure_new("p", "format", G_TYPE_STRING, "landmark_points", "data_buffer", G_TYPE_VARIANT,
                        g_variant_new_string("not bytes"), nullptr),
      gst_structure_new("face", "eyes->x", G_TYPE_DOUBLE, kNaN, "eyes->y", G_TYPE_INT, 1, "eyes->width", G_TYPE_INT,
                        20, "eyes->height", G_TYPE_INT, 10, nullptr),
      gst_structure_new("face", "eyes->x", G_TYPE_INT, 1, "eyes->y", G_TYPE_INT, 1, "eyes->width", G_TYPE_INT, 0,
                        "eyes->height", G_TYPE_INT, 10, nullptr),
      gst_structure_new("face", "eyes->x", G_TYPE_STRING, "1", "eyes->y", G_TYPE_INT, 1, "eyes->width", G_TYPE_INT,
                        20, "eyes->height", G_TYPE_INT, 10, nullptr),
  };
  for (std::size_t i = 0; i < hostile.size(); ++i) {
    GstVideoRegionOfInterestMeta* roi = add_face(buffer, static_cast<gint>(i), hostile[i]);
    gdouble *x = nullptr, *y = nullptr;
    guint n = 7;
    EXPECT_FALSE(gst_taconite_roi_get_landmarks(roi, &x, &y, &n)) << "hostile param " << i;
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(x, nullptr);
  }
  guint n = 7;
  EXPECT_FALSE(gst_taconite_roi_get_landmarks(nullptr, nullptr, nullptr, &n));
  EXPECT_EQ(n, 0u);
  // NaN points are returned as written (the alignment refuses them; taconitepublish reports them).
  GstVideoRegionOfInterestMeta* nan_point = add_face(buffer, 99, landmarks({kNaN, 1}, {2, 3}));
  const std::vector<double> read = points_of(nan_point);
  ASSERT_EQ(read.size(), 4u);
  EXPECT_TRUE(std::isnan(read[0]));
  gst_buffer_unref(buffer);
}

TEST(RoiAccessors, HasParamNamesAnyParamAndNullIsAbsent) {
  GstBuffer* buffer = empty_frame();
  GstVideoRegionOfInterestMeta* face = add_face(buffer, 1, gst_structure_new_empty("quality"));
  EXPECT_TRUE(gst_taconite_roi_has_param(face, "quality")) << "even without fields";
  EXPECT_FALSE(gst_taconite_roi_has_param(face, "detection"));
  EXPECT_FALSE(gst_taconite_roi_has_param(face, nullptr));
  EXPECT_FALSE(gst_taconite_roi_has_param(nullptr, "quality"));
  gst_buffer_unref(buffer);
}

TEST(RoiAccessors, BoxIsReturnedUnclampedAndJudged) {
  GstBuffer* buffer = empty_frame();
  GstVideoRegionOfInterestMeta* face = add_face(buffer, 1);
  guint x = 0, y = 0, w = 0, h = 0;
  EXPECT_TRUE(gst_taconite_roi_get_box(face, &x, &y, &w, &h));
  EXPECT_EQ(std::vector<guint>({x, y, w, h}), std::vector<guint>({10, 20, 40, 50}));
  face->w = 0;
  EXPECT_FALSE(gst_taconite_roi_get_box(face, &x, &y, &w, &h)) << "empty";
  EXPECT_EQ(w, 0u) << "the outputs say what is there";
  face->w = 40;
  face->x = G_MAXUINT - 5;
  EXPECT_FALSE(gst_taconite_roi_get_box(face, nullptr, nullptr, nullptr, nullptr)) << "far edge past G_MAXUINT";
  x = 3;
  EXPECT_FALSE(gst_taconite_roi_get_box(nullptr, &x, nullptr, nullptr, nullptr));
  EXPECT_EQ(x, 3u);
  gst_buffer_unref(buffer);
}

TEST(RoiAccessors, DetectionConfidenceFreshnessAndTrackState) {
  GstBuffer* buffer = empty_frame();
  GstVideoRegionOfInterestMeta* measured = add_face(
      buffer, 1, gst_structure_new("detection", "confidence", G_TYPE_FLOAT, 0.5f, "fresh", G_TYPE_BOOLEAN, TRUE, nullptr));
  GstVideoRegionOfInterestMeta* carried = add_face(
      buffer, 2, gst_structure_new("detection", "confidence", G_TYPE_DOUBLE, 0.9, "fresh", G_TYPE_BOOLEAN, FALSE, nullptr));
  GstVideoRegionOfInterestMeta* predicted = add_face(
      buffer, 3, gst_structure_new("detection", "confidence", G_TYPE_DOUBLE, kNaN, "predicted", G_TYPE_BOOLEAN, TRUE, nullptr));
  GstVideoRegionOfInterestMeta* facedetect = add_face(buffer, 4);
  GstVideoRegionOfInterestMeta* wrong = add_face(
      buffer, 5, gst_structure_new("detection", "confidence", G_TYPE_STRING, "high", "fresh", G_TYPE_INT, 0, nullptr));
  for (GstVideoRegionOfInterestMeta* roi : {measured, carried, predicted, facedetect})
    gst_video_region_of_interest_meta_add_param(roi, gst_structure_new("object_id", "id", G_TYPE_UINT, 3u, nullptr));

  gdouble confidence = -1;
  EXPECT_TRUE(gst_taconite_roi_get_detection_confidence(measured, &confidence));
  EXPECT_DOUBLE_EQ(confidence, 0.5);
  confidence = -1;
  EXPECT_FALSE(gst_taconite_roi_get_detection_confidence(predicted, &confidence)) << "NaN";
  EXPECT_FALSE(gst_taconite_roi_get_detection_confidence(facedetect, &confidence));
  EXPECT_FALSE(gst_taconite_roi_get_detection_confidence(wrong, &confidence));
  EXPECT_FALSE(gst_taconite_roi_get_detection_confidence(nullptr, &confidence));
  EXPECT_EQ(confidence, -1);
  gboolean flag = FALSE;
  EXPECT_TRUE(gst_taconite_roi_get_fresh(measured, &flag));
  EXPECT_TRUE(flag);
  EXPECT_FALSE(gst_taconite_roi_get_fresh(wrong, &flag)) << "an int is no boolean";
  EXPECT_TRUE(gst_taconite_roi_get_predicted(predicted, &flag));
  EXPECT_TRUE(flag);
  EXPECT_FALSE(gst_taconite_roi_get_predicted(measured, &flag));

  EXPECT_FALSE(gst_taconite_roi_is_predicted(measured));
  EXPECT_TRUE(gst_taconite_roi_is_predicted(carried)) << "fresh FALSE";
  EXPECT_TRUE(gst_taconite_roi_is_predicted(predicted));
  EXPECT_FALSE(gst_taconite_roi_is_predicted(facedetect)) << "no word on it: measured";
  EXPECT_FALSE(gst_taconite_roi_is_predicted(nullptr));
  EXPECT_EQ(gst_taconite_roi_get_track_state(measured), GST_TACONITE_TRACK_STATE_TRACKED);
  EXPECT_EQ(gst_taconite_roi_get_track_state(facedetect), GST_TACONITE_TRACK_STATE_TRACKED);
  EXPECT_EQ(gst_taconite_roi_get_track_state(carried), GST_TACONITE_TRACK_STATE_PREDICTED);
  EXPECT_EQ(gst_taconite_roi_get_track_state(predicted), GST_TACONITE_TRACK_STATE_PREDICTED);
  EXPECT_EQ(gst_taconite_roi_get_track_state(wrong), GST_TACONITE_TRACK_STATE_NONE) << "no track id";
  EXPECT_EQ(gst_taconite_roi_get_track_state(nullptr), GST_TACONITE_TRACK_STATE_NONE);
  EXPECT_STREQ(gst_taconite_track_state_to_string(GST_TACONITE_TRACK_STATE_PREDICTED), "predicted");
  EXPECT_STREQ(gst_taconite_track_state_to_string(static_cast<GstTaconiteTrackState>(7)), "none");
  EXPECT_STREQ(g_type_name(GST_TACONITE_TYPE_TRACK_STATE), "GstTaconiteTrackState");
  gst_buffer_unref(buffer);
}

TEST(RoiAccessors, TrackIdOfEveryIntegerTypeAndUnderAConfiguredParamName) {
  GstBuffer* buffer = empty_frame();
  GstVideoRegionOfInterestMeta* unsigned64 =
      add_face(buffer, 1, gst_structure_new("object_id", "id", G_TYPE_UINT64, G_GUINT64_CONSTANT(1) << 40, nullptr));
  GstVideoRegionOfInterestMeta* too_big =
      add_face(buffer, 2, gst_structure_new("object_id", "id", G_TYPE_UINT64, G_MAXUINT64, nullptr));
  GstVideoRegionOfInterestMeta* named =
      add_face(buffer, 3, gst_structure_new("tracking", "id", G_TYPE_INT, 11, nullptr));
  GstVideoRegionOfInterestMeta* field =
      add_face(buffer, 4, gst_structure_new("detection", "person-id", G_TYPE_INT64, G_GINT64_CONSTANT(12), nullptr));
  GstVideoRegionOfInterestMeta* field_object_id =
      add_face(buffer, 5, gst_structure_new("meta", "object_id", G_TYPE_UINT, 13u, nullptr));
  gint64 id = 0;
  EXPECT_TRUE(gst_taconite_roi_get_track_id(unsigned64, &id));
  EXPECT_EQ(id, G_GINT64_CONSTANT(1) << 40);
  id = -5;
  EXPECT_FALSE(gst_taconite_roi_get_track_id(too_big, &id)) << "a uint64 past G_MAXINT64 does not wrap";
  EXPECT_EQ(id, -5);
  EXPECT_TRUE(gst_taconite_roi_get_track_id_from(named, "tracking", &id));
  EXPECT_EQ(id, 11);
  EXPECT_FALSE(gst_taconite_roi_get_track_id(named, &id));
  EXPECT_TRUE(gst_taconite_roi_get_track_id_from(field, "person-id", &id));
  EXPECT_EQ(id, 12);
  EXPECT_TRUE(gst_taconite_roi_get_track_id(field_object_id, &id)) << "an object_id field, as the elements read";
  EXPECT_EQ(id, 13);
  EXPECT_FALSE(gst_taconite_roi_get_track_id_from(named, nullptr, &id));
  EXPECT_FALSE(gst_taconite_roi_get_track_id_from(named, "", &id));
  EXPECT_FALSE(gst_taconite_roi_get_track_id_from(nullptr, "tracking", &id));
  gst_buffer_unref(buffer);
}

TEST(RoiAccessors, QualityPrefersTheEmbeddingScoreAndRefusesNonFiniteOnes) {
  GstBuffer* buffer = empty_frame();
  GstVideoRegionOfInterestMeta* both = add_face(
      buffer, 1, gst_structure_new("quality", "score", G_TYPE_DOUBLE, 0.4, "embedding-score", G_TYPE_DOUBLE, 0.7,
                                   "yaw", G_TYPE_DOUBLE, -12.5, nullptr));
  GstVideoRegionOfInterestMeta* frame_only =
      add_face(buffer, 2, gst_structure_new("quality", "score", G_TYPE_FLOAT, 0.25f, nullptr));
  GstVideoRegionOfInterestMeta* nan_embedding = add_face(
      buffer, 3, gst_structure_new("quality", "score", G_TYPE_DOUBLE, 0.3, "embedding-score", G_TYPE_DOUBLE, kNaN, nullptr));
  GstVideoRegionOfInterestMeta* words =
      add_face(buffer, 4, gst_structure_new("quality", "score", G_TYPE_STRING, "good", nullptr));
  gdouble q = -1;
  EXPECT_TRUE(gst_taconite_roi_get_quality(both, &q));
  EXPECT_DOUBLE_EQ(q, 0.7);
  EXPECT_TRUE(gst_taconite_roi_get_quality(frame_only, &q));
  EXPECT_DOUBLE_EQ(q, 0.25);
  EXPECT_TRUE(gst_taconite_roi_get_quality(nan_embedding, &q)) << "the frame's score stands in";
  EXPECT_DOUBLE_EQ(q, 0.3);
  q = -1;
  EXPECT_FALSE(gst_taconite_roi_get_quality(words, &q));
  EXPECT_FALSE(gst_taconite_roi_get_quality(nullptr, &q));
  EXPECT_EQ(q, -1);
  EXPECT_TRUE(gst_taconite_roi_get_quality_field(both, "yaw", &q));
  EXPECT_DOUBLE_EQ(q, -12.5);
  EXPECT_FALSE(gst_taconite_roi_get_quality_field(both, "roll", &q));
  EXPECT_FALSE(gst_taconite_roi_get_quality_field(both, nullptr, &q));
  gst_buffer_unref(buffer);
}

TEST(RoiAccessors, IdentityOfForeignTypesIsReadAndNonFiniteConfidenceRefused) {
  GstBuffer* buffer = empty_frame();
  GstVideoRegionOfInterestMeta* foreign = add_face(
      buffer, 1, gst_structure_new("identity", "label", G_TYPE_STRING, "carol", "label_id", G_TYPE_UINT, 9u,
                                   "confidence", G_TYPE_FLOAT, 0.5f, nullptr));
  GstVideoRegionOfInterestMeta* nan = add_face(
      buffer, 2, gst_structure_new("identity", "label_state", G_TYPE_STRING, "known", "label", G_TYPE_STRING, "dan",
                                   "label_id", G_TYPE_INT64, G_MAXINT64, "confidence", G_TYPE_DOUBLE, kNaN, nullptr));
  gint label_id = 0;
  gdouble confidence = 0;
  EXPECT_TRUE(gst_taconite_roi_get_label_id(foreign, &label_id));
  EXPECT_EQ(label_id, 9);
  EXPECT_TRUE(gst_taconite_roi_get_confidence(foreign, &confidence));
  EXPECT_DOUBLE_EQ(confidence, 0.5);
  EXPECT_FALSE(gst_taconite_roi_get_label_id(nan, &label_id)) << "beyond gint";
  EXPECT_FALSE(gst_taconite_roi_get_confidence(nan, &confidence)) << "NaN";
  EXPECT_STREQ(gst_taconite_roi_get_label(nan), "dan");
  gst_buffer_unref(buffer);
}

}  // namespace

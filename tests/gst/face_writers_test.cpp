// gsttaconitemeta-1.0's typed ROI writes (gst/taconite/gsttaconiteface.h): each setter's param read
// back by the typed readers and on the wire as DL Streamer and the docs name it, and each refusal
// (NULL, NaN, out-of-range, non-UTF-8, too many points) changing nothing.
#include <gst/taconite/gsttaconiteface.h>

#include <limits>
#include <string>
#include <vector>

#include "gst_test_support.hpp"

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

class FaceWriters : public ::testing::Test {
 protected:
  void SetUp() override {
    buffer = gst_buffer_new_allocate(nullptr, 64, nullptr);
    roi = gst_buffer_add_video_region_of_interest_meta(buffer, "face", 10, 20, 40, 50);
  }
  void TearDown() override { gst_buffer_unref(buffer); }
  // The ROI's params as text, to show a refusal changed nothing.
  std::string params() const {
    std::string text;
    for (GList* l = roi->params; l; l = l->next) {
      gchar* s = gst_structure_to_string(static_cast<GstStructure*>(l->data));
      text += s;
      text += ';';
      g_free(s);
    }
    return text;
  }
  guint count(const char* name) const {
    guint n = 0;
    for (GList* l = roi->params; l; l = l->next) n += gst_structure_has_name(static_cast<GstStructure*>(l->data), name);
    return n;
  }
  GstBuffer* buffer = nullptr;
  GstVideoRegionOfInterestMeta* roi = nullptr;
};

TEST_F(FaceWriters, LandmarksRoundTripInFramePixelsAndReplaceEveryEarlierParam) {
  gst_video_region_of_interest_meta_add_param(roi, gst_structure_new("landmarks", "x", G_TYPE_STRING, "old", nullptr));
  gst_video_region_of_interest_meta_add_param(roi, gst_structure_new("landmarks", "x", G_TYPE_STRING, "older", nullptr));
  const gdouble x[5] = {11, 12, 13, 14, 15}, y[5] = {21, 22, 23, 24, 25};
  ASSERT_TRUE(gst_taconite_roi_set_landmarks(roi, x, y, 5));
  EXPECT_EQ(count("landmarks"), 1u);
  const GstStructure* s = gst_video_region_of_interest_meta_get_param(roi, "landmarks");
  ASSERT_TRUE(GST_VALUE_HOLDS_ARRAY(gst_structure_get_value(s, "x"))) << "x and y arrays of doubles on the wire";
  EXPECT_TRUE(G_VALUE_HOLDS_DOUBLE(gst_value_array_get_value(gst_structure_get_value(s, "y"), 0)));
  gdouble *rx = nullptr, *ry = nullptr;
  guint n = 0;
  ASSERT_TRUE(gst_taconite_roi_get_landmarks(roi, &rx, &ry, &n));
  ASSERT_EQ(n, 5u);
  EXPECT_EQ(std::vector<double>(rx, rx + 5), std::vector<double>(x, x + 5));
  EXPECT_EQ(std::vector<double>(ry, ry + 5), std::vector<double>(y, y + 5));
  g_free(rx);
  g_free(ry);
}

TEST_F(FaceWriters, LandmarksThatCannotBePointsAreRefused) {
  const gdouble x[2] = {1, kNaN}, y[2] = {1, 2}, inf[2] = {kInf, 1};
  const std::vector<gdouble> many(1025, 1.0);
  const std::string before = params();
  EXPECT_FALSE(gst_taconite_roi_set_landmarks(roi, x, y, 2)) << "NaN";
  EXPECT_FALSE(gst_taconite_roi_set_landmarks(roi, y, inf, 2)) << "infinity";
  EXPECT_FALSE(gst_taconite_roi_set_landmarks(roi, many.data(), many.data(), 1025)) << "over 1024 points";
  EXPECT_FALSE(gst_taconite_roi_set_landmarks(roi, y, y, 0));
  EXPECT_FALSE(gst_taconite_roi_set_landmarks(roi, nullptr, y, 2));
  EXPECT_FALSE(gst_taconite_roi_set_landmarks(nullptr, y, y, 2));
  EXPECT_EQ(params(), before);
  EXPECT_EQ(gst_taconite_points_params_new("not a name!", y, y, 2), nullptr);
  EXPECT_EQ(gst_taconite_points_params_new(nullptr, y, y, 2), nullptr);
  GstStructure* ok = gst_taconite_points_params_new("landmarks-68", many.data(), many.data(), 1024);
  ASSERT_NE(ok, nullptr);
  EXPECT_EQ(gst_value_array_get_size(gst_structure_get_value(ok, "x")), 1024u);
  gst_structure_free(ok);
}

TEST_F(FaceWriters, DetectionFreshAndPredictedRoundTrip) {
  EXPECT_FALSE(gst_taconite_roi_set_fresh(roi, FALSE)) << "no detection param yet";
  EXPECT_FALSE(gst_taconite_roi_set_predicted(roi, TRUE));
  EXPECT_EQ(params(), "");
  ASSERT_TRUE(gst_taconite_roi_set_detection(roi, 0.875));
  EXPECT_STREQ(gst_structure_get_string(gst_video_region_of_interest_meta_get_param(roi, "detection"), "label"), "face");
  ASSERT_TRUE(gst_taconite_roi_set_fresh(roi, FALSE));
  gdouble confidence = 0;
  gboolean flag = TRUE;
  EXPECT_TRUE(gst_taconite_roi_get_detection_confidence(roi, &confidence));
  EXPECT_EQ(confidence, 0.875);
  EXPECT_TRUE(gst_taconite_roi_get_fresh(roi, &flag));
  EXPECT_FALSE(flag);
  EXPECT_TRUE(gst_taconite_roi_is_predicted(roi)) << "carried";
  ASSERT_TRUE(gst_taconite_roi_set_fresh(roi, TRUE));
  EXPECT_FALSE(gst_taconite_roi_is_predicted(roi));
  ASSERT_TRUE(gst_taconite_roi_set_predicted(roi, TRUE));
  EXPECT_TRUE(gst_taconite_roi_get_predicted(roi, &flag));
  EXPECT_TRUE(flag);
  EXPECT_TRUE(gst_taconite_roi_is_predicted(roi));
  const std::string before = params();
  EXPECT_FALSE(gst_taconite_roi_set_detection(roi, kNaN));
  EXPECT_FALSE(gst_taconite_roi_set_detection(roi, -kInf));
  EXPECT_FALSE(gst_taconite_roi_set_detection(nullptr, 0.5));
  EXPECT_EQ(params(), before);
  ASSERT_TRUE(gst_taconite_roi_set_detection(roi, 0.5));
  EXPECT_FALSE(gst_taconite_roi_get_fresh(roi, &flag)) << "a new detection replaces the old, flags and all";
  EXPECT_EQ(count("detection"), 1u);
}

TEST_F(FaceWriters, TrackIdAndUidRoundTripAsIntOrInt64) {
  ASSERT_TRUE(gst_taconite_roi_set_track_id(roi, 7, "9b2e-uid"));
  const GstStructure* s = gst_video_region_of_interest_meta_get_param(roi, "object_id");
  EXPECT_TRUE(G_VALUE_HOLDS_INT(gst_structure_get_value(s, "id"))) << "DL Streamer's int";
  gint64 id = 0;
  EXPECT_TRUE(gst_taconite_roi_get_track_id(roi, &id));
  EXPECT_EQ(id, 7);
  EXPECT_STREQ(gst_taconite_roi_get_track_uid(roi), "9b2e-uid");
  EXPECT_EQ(gst_taconite_roi_get_track_state(roi), GST_TACONITE_TRACK_STATE_TRACKED);
  for (const gint64 big : {G_MAXINT64, G_MININT64, gint64{G_MAXINT} + 1}) {
    ASSERT_TRUE(gst_taconite_roi_set_track_id(roi, big, nullptr));
    EXPECT_TRUE(G_VALUE_HOLDS_INT64(
        gst_structure_get_value(gst_video_region_of_interest_meta_get_param(roi, "object_id"), "id")));
    EXPECT_TRUE(gst_taconite_roi_get_track_id(roi, &id));
    EXPECT_EQ(id, big);
    EXPECT_EQ(gst_taconite_roi_get_track_uid(roi), nullptr) << "replaced: the old uid is gone";
  }
  EXPECT_EQ(count("object_id"), 1u);
  const std::string before = params();
  EXPECT_FALSE(gst_taconite_roi_set_track_id(roi, 8, "")) << "an empty uid";
  EXPECT_FALSE(gst_taconite_roi_set_track_id(roi, 8, "\xff\xfe")) << "not UTF-8";
  EXPECT_FALSE(gst_taconite_roi_set_track_id(nullptr, 8, nullptr));
  EXPECT_EQ(params(), before);
  EXPECT_TRUE(gst_taconite_roi_remove_param(roi, "object_id"));
  EXPECT_FALSE(gst_taconite_roi_remove_param(roi, "object_id")) << "nothing left";
  EXPECT_FALSE(gst_taconite_roi_get_track_id(roi, &id));
  EXPECT_FALSE(gst_taconite_roi_remove_param(nullptr, "object_id"));
  EXPECT_FALSE(gst_taconite_roi_remove_param(roi, nullptr));
}

TEST_F(FaceWriters, QualityRoundTripsKnownFieldsOnly) {
  const gchar* fields[] = {"score", "yaw", "embedding-score"};
  const gdouble values[] = {0.5, -20.0, 0.75};
  ASSERT_TRUE(gst_taconite_roi_set_quality(roi, fields, values, 3));
  gdouble q = 0;
  EXPECT_TRUE(gst_taconite_roi_get_quality(roi, &q));
  EXPECT_EQ(q, 0.75);
  EXPECT_TRUE(gst_taconite_roi_get_quality_field(roi, "yaw", &q));
  EXPECT_EQ(q, -20.0);
  const std::string before = params();
  const gchar* unknown[] = {"score", "beauty"};
  const gchar* twice[] = {"score", "score"};
  const gdouble nan[] = {0.5, kNaN};
  EXPECT_FALSE(gst_taconite_roi_set_quality(roi, unknown, values, 2));
  EXPECT_FALSE(gst_taconite_roi_set_quality(roi, twice, values, 2));
  EXPECT_FALSE(gst_taconite_roi_set_quality(roi, fields, nan, 2));
  EXPECT_FALSE(gst_taconite_roi_set_quality(roi, fields, values, 0));
  EXPECT_FALSE(gst_taconite_roi_set_quality(roi, fields, values, 9));
  EXPECT_FALSE(gst_taconite_roi_set_quality(nullptr, fields, values, 1));
  EXPECT_EQ(params(), before);
}

TEST_F(FaceWriters, IdentityRoundTripsPendingKnownAndUnknown) {
  ASSERT_TRUE(gst_taconite_roi_set_identity_pending(roi));
  EXPECT_EQ(gst_taconite_roi_get_label_state(roi), GST_TACONITE_LABEL_STATE_PENDING);
  EXPECT_EQ(gst_taconite_roi_get_label(roi), nullptr);
  ASSERT_TRUE(gst_taconite_roi_set_identity(roi, "Zoë", 4, 0.625));
  EXPECT_EQ(count("identity"), 1u);
  EXPECT_EQ(gst_taconite_roi_get_label_state(roi), GST_TACONITE_LABEL_STATE_KNOWN);
  EXPECT_STREQ(gst_taconite_roi_get_label(roi), "Zoë");
  gint label_id = 0;
  gdouble confidence = 0;
  EXPECT_TRUE(gst_taconite_roi_get_label_id(roi, &label_id));
  EXPECT_EQ(label_id, 4);
  EXPECT_TRUE(gst_taconite_roi_get_confidence(roi, &confidence));
  EXPECT_EQ(confidence, 0.625);
  ASSERT_TRUE(gst_taconite_roi_set_identity(roi, "unknown", -1, 0.2));
  EXPECT_EQ(gst_taconite_roi_get_label_state(roi), GST_TACONITE_LABEL_STATE_UNKNOWN);
  EXPECT_STREQ(gst_structure_get_string(gst_video_region_of_interest_meta_get_param(roi, "identity"), "label_state"),
               "unknown");
  const std::string before = params();
  EXPECT_FALSE(gst_taconite_roi_set_identity(roi, "\xc3", 4, 0.5)) << "not UTF-8";
  EXPECT_FALSE(gst_taconite_roi_set_identity(roi, nullptr, 4, 0.5));
  EXPECT_FALSE(gst_taconite_roi_set_identity(roi, "eve", 0, 0.5)) << "ids start at 1";
  EXPECT_FALSE(gst_taconite_roi_set_identity(roi, "eve", -2, 0.5));
  EXPECT_FALSE(gst_taconite_roi_set_identity(roi, "eve", 4, kNaN));
  EXPECT_FALSE(gst_taconite_roi_set_identity(nullptr, "eve", 4, 0.5));
  EXPECT_FALSE(gst_taconite_roi_set_identity_pending(nullptr));
  EXPECT_EQ(params(), before);
}

TEST_F(FaceWriters, ReplaceParamTakesItsStructureEvenWithoutARoi) {
  ASSERT_TRUE(gst_taconite_roi_replace_param(roi, gst_structure_new("taconite-identity", "votes", G_TYPE_UINT, 1u, nullptr)));
  ASSERT_TRUE(gst_taconite_roi_replace_param(roi, gst_structure_new("taconite-identity", "votes", G_TYPE_UINT, 2u, nullptr)));
  EXPECT_EQ(count("taconite-identity"), 1u);
  guint votes = 0;
  EXPECT_TRUE(gst_structure_get_uint(gst_video_region_of_interest_meta_get_param(roi, "taconite-identity"), "votes", &votes));
  EXPECT_EQ(votes, 2u);
  // Freed, not leaked (gst-valgrind runs this).
  EXPECT_FALSE(gst_taconite_roi_replace_param(nullptr, gst_structure_new_empty("x")));
}

}  // namespace

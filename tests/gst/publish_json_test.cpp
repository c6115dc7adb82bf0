// taconitepublish's documents are JSON every strict parser takes, whatever the metas carry
// (issue 29 bugs 6 and 7): numbers over the whole double range (json-glib 1.6 printed 1e17 as
// `1e+17.0`) read back exactly, in frame documents and track events; strings that are not UTF-8
// (a label an upstream element set) are published with U+FFFD, counted in strings-repaired and
// warned about once, naming the member. MQTT sends the same text (publish_mqtt_test.cpp).
#include <glib/gstdio.h>
#include <gst/taconite/gsttaconitemeta.h>
#include <gst/video/video.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>

#include "gst_test_support.hpp"
#include "publish_frames.hpp"

namespace {

using namespace gsttest;

const std::string kFffd = "\xEF\xBF\xBD";

// 0, -0, the subnormal and normal extremes, values printed with an exponent, and random doubles
// of every magnitude.
std::vector<double> double_range() {
  std::vector<double> values = {0.0,  -0.0, 5e-324, 1e-300, 1e-7,   0.1,     1.0 / 3.0, 1e16,
                                1e17, 1e20, 1e308,  DBL_MAX, -DBL_MAX, DBL_MIN, -1e17,    123.0};
  std::mt19937_64 bits(29);
  while (values.size() < 48) {
    const double value = std::bit_cast<double>(bits());
    if (std::isfinite(value)) values.push_back(value);
  }
  return values;
}

// The ROI of `buffer` with id `id`.
GstVideoRegionOfInterestMeta* roi_with_id(GstBuffer* buffer, int id) {
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    if (reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta)->id == id)
      return reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta);
  return nullptr;
}

// face_frame's one face with `value` in every number an upstream element sets: the identity's
// confidence, a detection confidence, every quality member and the embedding meta's norm.
GstBuffer* valued_frame(int index, double value) {
  GstBuffer* buffer = face_frame(index, 1);
  GstVideoRegionOfInterestMeta* roi = roi_with_id(buffer, 1);
  gst_structure_set(gst_video_region_of_interest_meta_get_param(roi, "identity"), "confidence", G_TYPE_DOUBLE, value,
                    nullptr);
  gst_video_region_of_interest_meta_add_param(
      roi, gst_structure_new("detection", "confidence", G_TYPE_DOUBLE, value, nullptr));
  GstStructure* quality = gst_structure_new_empty("quality");
  for (const char* field : {"score", "size", "pose", "sharpness", "yaw", "pitch", "roll", "embedding-score"})
    gst_structure_set(quality, field, G_TYPE_DOUBLE, value, nullptr);
  gst_video_region_of_interest_meta_add_param(roi, quality);
  gst_buffer_get_taconite_embedding_meta_for_roi(buffer, 1)->norm = value;
  return buffer;
}

// face_frame's faces labelled with `labels` (the identity param's label), as an upstream element
// may set them: any bytes. gst_structure_set refuses a string that is not UTF-8 (a g_warning, the
// field dropped), but nothing stops an element from writing one into the field's GValue in place.
GstBuffer* labelled_frame(int index, const std::vector<std::string>& labels) {
  GstBuffer* buffer = face_frame(index, static_cast<int>(labels.size()));
  for (std::size_t i = 0; i < labels.size(); ++i) {
    GstStructure* identity =
        gst_video_region_of_interest_meta_get_param(roi_with_id(buffer, 1 + static_cast<int>(i)), "identity");
    gst_structure_set(identity, "label_state", G_TYPE_STRING, "known", nullptr);
    g_value_set_string(const_cast<GValue*>(gst_structure_get_value(identity, "label")), labels[i].c_str());
  }
  return buffer;
}

bool same_double(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

class PublishJsonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gchar* dir = g_dir_make_tmp("taconite-publish-json-XXXXXX", nullptr);
    ASSERT_NE(dir, nullptr);
    dir_ = dir;
    g_free(dir);
    path_ = dir_ + "/out.jsonl";
    bus_ = gst_bus_new();
  }
  void TearDown() override {
    gst_bus_set_flushing(bus_, TRUE);  // queued messages hold the element, which holds the bus
    if (h_) gst_harness_teardown(h_);
    gst_object_unref(bus_);
    g_remove(path_.c_str());
    g_rmdir(dir_.c_str());
  }
  void start(std::vector<std::pair<std::string, std::string>> properties) {
    properties.emplace_back("location", path_);
    properties.emplace_back("stream", "door");
    h_ = publish_harness(properties, bus_);
    ASSERT_NE(h_, nullptr);
  }
  void push(GstBuffer* buffer) {
    ASSERT_EQ(gst_harness_push(h_, buffer), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h_));
  }
  // The lines written, each checked by Python's json (NaN, Infinity refused) after a strict UTF-8
  // decoding, then parsed; the nodes are unreffed at the end of the test.
  std::vector<JsonObject*> strict_lines() {
    const std::vector<std::string> lines = file_lines(path_);
    EXPECT_EQ(strict_json_problem(lines), "");
    std::vector<JsonObject*> objects;
    for (const std::string& line : lines) {
      JsonNode* node = json_from_string(line.c_str(), nullptr);
      if (!node || !JSON_NODE_HOLDS_OBJECT(node)) {
        ADD_FAILURE() << "not a JSON object: " << line.substr(0, 300);
        if (node) json_node_unref(node);
        continue;
      }
      nodes_.push_back(JsonNodePtr(node));
      objects.push_back(json_node_get_object(node));
    }
    return objects;
  }
  std::vector<std::string> warnings() {
    std::vector<std::string> texts;
    while (GstMessage* m = gst_bus_pop_filtered(bus_, GST_MESSAGE_WARNING)) {
      GError* e = nullptr;
      gst_message_parse_warning(m, &e, nullptr);
      texts.push_back(e->message);
      g_error_free(e);
      gst_message_unref(m);
    }
    return texts;
  }

  struct NodeUnref {
    void operator()(JsonNode* n) const { json_node_unref(n); }
  };
  using JsonNodePtr = std::unique_ptr<JsonNode, NodeUnref>;

  std::string dir_, path_;
  GstBus* bus_ = nullptr;
  GstHarness* h_ = nullptr;
  std::vector<JsonNodePtr> nodes_;
};

TEST_F(PublishJsonTest, EveryFiniteDoubleInAFrameDocumentIsValidJsonAndReadsBackExactly) {
  start({{"embedding", "array"}});
  const std::vector<double> values = double_range();
  for (std::size_t i = 0; i < values.size(); ++i) push(valued_frame(static_cast<int>(i), values[i]));
  const std::vector<JsonObject*> docs = strict_lines();
  ASSERT_EQ(docs.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    JsonObject* face = json_array_get_object_element(json_object_get_array_member(docs[i], "faces"), 0);
    const double v = values[i];
    EXPECT_TRUE(same_double(json_object_get_double_member(face, "confidence"), v)) << v;
    EXPECT_TRUE(same_double(json_object_get_double_member(face, "norm"), v)) << v;
    EXPECT_TRUE(same_double(json_object_get_double_member(json_object_get_object_member(face, "detection"),
                                                          "confidence"), v))
        << v;
    JsonObject* quality = json_object_get_object_member(face, "quality");
    for (const char* member : {"score", "size", "pose", "sharpness", "yaw", "pitch", "roll", "embedding_score"})
      EXPECT_TRUE(same_double(json_object_get_double_member(quality, member), v)) << member << " " << v;
    // The embedding's float32 values, printed as doubles, convert back to the same floats.
    JsonArray* embedding = json_object_get_array_member(face, "embedding");
    const std::vector<float> expected = face_frame_embedding(static_cast<int>(i), 0);
    ASSERT_EQ(json_array_get_length(embedding), expected.size());
    for (guint k = 0; k < expected.size(); ++k)
      ASSERT_EQ(static_cast<float>(json_array_get_double_element(embedding, k)), expected[k]) << k;
  }
  EXPECT_EQ(counter(h_->element, "strings-repaired"), 0u);
}

TEST_F(PublishJsonTest, EveryFiniteDoubleInATrackEventIsValidJsonAndReadsBackExactly) {
  start({{"messages", "tracks"}});
  const std::vector<double> values = double_range();
  // One frame, one track per value (its identity's confidence), ended at EOS: a new and an end
  // event per track.
  GstBuffer* buffer = face_frame(0, static_cast<int>(values.size()));
  for (std::size_t i = 0; i < values.size(); ++i)
    gst_structure_set(gst_video_region_of_interest_meta_get_param(roi_with_id(buffer, 1 + static_cast<int>(i)),
                                                                  "identity"),
                      "confidence", G_TYPE_DOUBLE, values[i], "label_state", G_TYPE_STRING, "known", nullptr);
  push(buffer);
  ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_eos()));
  const std::vector<JsonObject*> events = strict_lines();
  ASSERT_EQ(events.size(), 2 * values.size());
  for (JsonObject* event : events) {
    const std::size_t i = static_cast<std::size_t>(json_object_get_int_member(event, "track_id") - 100);
    ASSERT_LT(i, values.size());
    EXPECT_TRUE(same_double(json_object_get_double_member(event, "confidence"), values[i])) << values[i];
  }
}

TEST_F(PublishJsonTest, LabelsThatAreNotUtf8ArePublishedWithReplacementsCountedAndWarnedOnce) {
  start({{"messages", "both"}});
  const std::string long_label = std::string(70000, 'a') + "\xff";
  push(labelled_frame(0, {"alice", "\xff\xfe\xfd"}));
  push(labelled_frame(1, {"\xc3", long_label}));
  ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_eos()));
  const std::vector<JsonObject*> lines = strict_lines();
  std::vector<std::string> face_labels, new_event_labels;
  guint64 mended_strings = 0;  // every string written with U+FFFD (no label here holds one itself)
  const auto label_of = [&](JsonObject* object) -> std::string {
    JsonNode* label = json_object_get_member(object, "label");
    if (!label || JSON_NODE_HOLDS_NULL(label)) return "";
    const std::string text = json_node_get_string(label);
    mended_strings += text.find(kFffd) != std::string::npos;
    return text;
  };
  for (JsonObject* line : lines) {
    if (json_object_get_string_member(line, "schema") == std::string("taconite-faces/1")) {
      JsonArray* faces = json_object_get_array_member(line, "faces");
      for (guint i = 0; i < json_array_get_length(faces); ++i)
        face_labels.push_back(label_of(json_array_get_object_element(faces, i)));
    } else {
      const std::string label = label_of(line);
      if (json_object_get_string_member(line, "event") == std::string("new")) new_event_labels.push_back(label);
    }
  }
  const std::vector<std::string> mended = {"alice", kFffd + kFffd + kFffd, kFffd, std::string(70000, 'a') + kFffd};
  EXPECT_EQ(face_labels, mended);
  // Tracks 100 and 101 start on frame 0: their new events carry frame 0's labels.
  EXPECT_EQ(new_event_labels, std::vector<std::string>(mended.begin(), mended.begin() + 2));
  EXPECT_GE(mended_strings, 3u + 1u);
  EXPECT_EQ(counter(h_->element, "strings-repaired"), mended_strings);
  const std::vector<std::string> warned = warnings();
  ASSERT_EQ(warned.size(), 1u) << "one warning per start, not one per string";
  EXPECT_NE(warned[0].find("\"faces[1].label\" of a faces document"), std::string::npos) << warned[0];
  EXPECT_NE(warned[0].find("strings-repaired"), std::string::npos) << warned[0];
}

}  // namespace

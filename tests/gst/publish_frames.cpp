#include "publish_frames.hpp"

#include <gst/taconite/gsttaconitemeta.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <glib/gstdio.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <tuple>

#include "gst_test_support.hpp"

namespace gsttest {

std::vector<float> face_frame_embedding(int index, int face) {
  std::vector<float> v(512);
  double sum = 0.0;
  for (std::size_t k = 0; k < v.size(); ++k) {
    v[k] = static_cast<float>(std::sin(0.1 * (k + 1) + index + 7.0 * face));
    sum += static_cast<double>(v[k]) * v[k];
  }
  for (float& x : v) x = static_cast<float>(x / std::sqrt(sum));
  return v;
}

GstBuffer* face_frame(int index, int faces) {
  GstBuffer* buffer = gst_buffer_new_allocate(nullptr, 320 * 240 * 3, nullptr);
  gst_buffer_memset(buffer, 0, 0, gst_buffer_get_size(buffer));
  GST_BUFFER_PTS(buffer) = index * kFrame;
  GST_BUFFER_DURATION(buffer) = kFrame;
  gst_buffer_add_video_region_of_interest_meta(buffer, "car", 0, 200, 50, 30)->id = 50;
  for (int i = 0; i < faces; ++i) {
    const guint x = 10 + 60 * i, y = 20;
    GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(buffer, "face", x, y, 40, 40);
    roi->id = 1 + i;  // unique, as taconiteadaface makes the ids of the faces it embeds
    gst_video_region_of_interest_meta_add_param(roi, gst_structure_new("object_id", "id", G_TYPE_INT, 100 + i, nullptr));
    GValue xs = G_VALUE_INIT, ys = G_VALUE_INIT;
    gst_value_array_init(&xs, 5);
    gst_value_array_init(&ys, 5);
    const double px[5] = {12, 28, 20, 14, 26}, py[5] = {15, 15, 22, 30, 30};
    for (int k = 0; k < 5; ++k) {
      GValue v = G_VALUE_INIT;
      g_value_init(&v, G_TYPE_DOUBLE);
      g_value_set_double(&v, x + px[k]);
      gst_value_array_append_value(&xs, &v);
      g_value_set_double(&v, y + py[k]);
      gst_value_array_append_and_take_value(&ys, &v);
    }
    GstStructure* landmarks = gst_structure_new_empty("landmarks");
    gst_structure_take_value(landmarks, "x", &xs);
    gst_structure_take_value(landmarks, "y", &ys);
    gst_video_region_of_interest_meta_add_param(roi, landmarks);
    const std::string label = "person-" + std::to_string(i);
    gst_video_region_of_interest_meta_add_param(
        roi, gst_structure_new("identity", "label", G_TYPE_STRING, label.c_str(), "label_id", G_TYPE_INT, i,
                               "confidence", G_TYPE_DOUBLE, 0.5 + i / 10.0, nullptr));
    const std::vector<float> embedding = face_frame_embedding(index, i);
    gst_buffer_add_taconite_embedding_meta(buffer, roi->id, embedding.data(), 512, 20.0 + i, "IR-18", "cpu", TRUE);
  }
  return buffer;
}

GstHarness* publish_harness(const std::vector<std::pair<std::string, std::string>>& properties, GstBus* bus) {
  GstElement* element = gst_element_factory_make("taconitepublish", nullptr);
  if (!element) return nullptr;
  for (const auto& [name, value] : properties) gst_util_set_object_arg(G_OBJECT(element), name.c_str(), value.c_str());
  if (bus) gst_element_set_bus(element, bus);
  GstHarness* h = gst_harness_new_empty();
  static GstStaticPadTemplate src = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
  static GstStaticPadTemplate sink = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
  gst_harness_add_element_full(h, element, &src, "sink", &sink, "src");
  gst_object_unref(element);
  gst_harness_set_src_caps_str(h, kPublishCaps);
  return h;
}

namespace {

bool is_int(JsonNode* n) { return JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_INT64; }
bool is_number(JsonNode* n) {
  return JSON_NODE_HOLDS_VALUE(n) && (json_node_get_value_type(n) == G_TYPE_INT64 ||
                                      json_node_get_value_type(n) == G_TYPE_DOUBLE);
}
bool is_string(JsonNode* n) { return JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING; }
bool is_bool(JsonNode* n) { return JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_BOOLEAN; }

}  // namespace

JsonNode* parse_document(const std::string& line) {
  GError* error = nullptr;
  JsonNode* root = json_from_string(line.c_str(), &error);
  if (!root) {
    ADD_FAILURE() << "not JSON: " << (error ? error->message : "empty") << ": " << line;
    if (error) g_error_free(error);
    return nullptr;
  }
  if (!JSON_NODE_HOLDS_OBJECT(root)) {
    ADD_FAILURE() << "not a JSON object: " << line;
    json_node_unref(root);
    return nullptr;
  }
  JsonObject* doc = json_node_get_object(root);
  const auto member = [&](JsonObject* o, const char* name) -> JsonNode* {
    JsonNode* n = json_object_get_member(o, name);
    if (!n) ADD_FAILURE() << "member '" << name << "' missing: " << line;
    return n;
  };
  const auto expect = [&](JsonObject* o, const char* name, bool (*ok)(JsonNode*), bool nullable) {
    JsonNode* n = member(o, name);
    if (n && !(ok(n) || (nullable && JSON_NODE_HOLDS_NULL(n)))) ADD_FAILURE() << "member '" << name << "' has the wrong type: " << line;
  };
  expect(doc, "schema", is_string, false);
  if (JsonNode* n = member(doc, "schema"); n && is_string(n)) {
    EXPECT_STREQ(json_node_get_string(n), "taconite-faces/1");
  }
  expect(doc, "stream", is_string, false);
  expect(doc, "frame", is_int, false);
  expect(doc, "pts_ns", is_int, true);
  expect(doc, "running_time_ns", is_int, true);
  expect(doc, "utc", is_string, false);
  expect(doc, "width", is_int, false);
  expect(doc, "height", is_int, false);
  expect(doc, "model", is_string, true);
  expect(doc, "backend", is_string, true);
  JsonNode* faces = member(doc, "faces");
  if (!faces || !JSON_NODE_HOLDS_ARRAY(faces)) {
    ADD_FAILURE() << "faces is not an array: " << line;
    return root;
  }
  JsonArray* list = json_node_get_array(faces);
  for (guint i = 0; i < json_array_get_length(list); ++i) {
    JsonObject* face = json_array_get_object_element(list, i);
    expect(face, "roi_id", is_int, false);
    JsonNode* box = member(face, "box");
    EXPECT_TRUE(box && JSON_NODE_HOLDS_ARRAY(box) && json_array_get_length(json_node_get_array(box)) == 4) << line;
    expect(face, "track_id", is_int, true);
    JsonNode* landmarks = member(face, "landmarks");
    EXPECT_TRUE(landmarks && (JSON_NODE_HOLDS_NULL(landmarks) || JSON_NODE_HOLDS_ARRAY(landmarks))) << line;
    expect(face, "aligned", is_bool, true);
    expect(face, "status", is_string, true);
    expect(face, "norm", is_number, true);
  }
  return root;
}

std::string strict_json_problem(const std::vector<std::string>& documents) {
  gchar* path = nullptr;
  const gint fd = g_file_open_tmp("taconite-strict-json-XXXXXX", &path, nullptr);
  if (fd < 0) return "cannot create a temporary file";
  close(fd);
  {
    std::ofstream out(path);
    for (const std::string& line : documents) out << line << '\n';
  }
  const std::string script =
      "import json, sys\n"
      "def refuse(name):\n"
      "    raise ValueError('not JSON: ' + name)\n"
      "for number, raw in enumerate(open(sys.argv[1], 'rb'), 1):\n"
      "    try:\n"
      "        json.loads(raw.decode('utf-8', errors='strict'), parse_constant=refuse)\n"
      "    except ValueError as e:\n"  // UnicodeDecodeError is one
      "        sys.exit(f'line {number}: {e}: {raw[:300]!r}')\n";
  const gchar* argv[] = {"/usr/bin/python3", "-c", script.c_str(), path, nullptr};
  gchar* errors = nullptr;
  gint status = -1;
  GError* error = nullptr;
  std::string problem;
  if (!g_spawn_sync(nullptr, const_cast<gchar**>(argv), nullptr, G_SPAWN_DEFAULT, nullptr, nullptr, nullptr, &errors,
                    &status, &error)) {
    problem = std::string("cannot run python3: ") + error->message;
    g_error_free(error);
  } else if (!g_spawn_check_wait_status(status, nullptr)) {
    problem = errors ? errors : "python3 failed";
  }
  g_free(errors);
  g_remove(path);
  g_free(path);
  return problem;
}

GstBuffer* non_finite_face_frame(int index) {
  GstBuffer* buffer = face_frame(index, 2);
  const double nan = std::nan(""), inf = INFINITY;
  GstVideoRegionOfInterestMeta* roi = nullptr;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    auto* r = reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta);
    if (r->id == 1) roi = r;
  }
  GstStructure* landmarks = gst_video_region_of_interest_meta_get_param(roi, "landmarks");
  for (const auto& [axis, k, value] : {std::tuple{"x", 0u, nan}, {"y", 1u, inf}, {"y", 2u, -inf}}) {
    GValue* v = const_cast<GValue*>(gst_value_array_get_value(gst_structure_get_value(landmarks, axis), k));
    g_value_set_double(v, value);
  }
  gst_structure_set(gst_video_region_of_interest_meta_get_param(roi, "identity"), "confidence", G_TYPE_DOUBLE, nan,
                    nullptr);
  GstTaconiteEmbeddingMeta* embedding = gst_buffer_get_taconite_embedding_meta_for_roi(buffer, 1);
  embedding->norm = inf;
  embedding->embedding[0] = static_cast<float>(nan);
  embedding->embedding[1] = static_cast<float>(inf);
  embedding->embedding[2] = static_cast<float>(-inf);
  return buffer;
}

void expect_non_finite_values_null(JsonObject* document) {
  JsonArray* faces = json_object_get_array_member(document, "faces");
  ASSERT_EQ(json_array_get_length(faces), 2u);
  JsonObject* face = json_array_get_object_element(faces, 0);
  JsonArray* landmarks = json_object_get_array_member(face, "landmarks");
  EXPECT_TRUE(json_array_get_null_element(json_array_get_array_element(landmarks, 0), 0)) << "x NaN";
  EXPECT_TRUE(json_array_get_null_element(json_array_get_array_element(landmarks, 1), 1)) << "y +Inf";
  EXPECT_TRUE(json_array_get_null_element(json_array_get_array_element(landmarks, 2), 1)) << "y -Inf";
  EXPECT_DOUBLE_EQ(json_array_get_double_element(json_array_get_array_element(landmarks, 1), 0), 28.0 + 10.0);
  EXPECT_TRUE(json_object_get_null_member(face, "confidence"));
  EXPECT_TRUE(json_object_get_null_member(face, "norm"));
  EXPECT_STREQ(json_object_get_string_member(face, "label"), "person-0");
  JsonArray* values = json_object_get_array_member(face, "embedding");
  ASSERT_EQ(json_array_get_length(values), 512u);
  for (guint k = 0; k < 3; ++k) EXPECT_TRUE(json_array_get_null_element(values, k)) << "value " << k;
  EXPECT_FALSE(json_array_get_null_element(values, 3));
  // The other face is untouched.
  JsonObject* other = json_array_get_object_element(faces, 1);
  EXPECT_DOUBLE_EQ(json_object_get_double_member(other, "norm"), 21.0);
  EXPECT_DOUBLE_EQ(json_object_get_double_member(other, "confidence"), 0.6);
}

std::vector<std::string> file_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<JsonNode*> json_line_nodes(const std::string& path) {
  std::vector<JsonNode*> nodes;
  for (const std::string& line : file_lines(path)) {
    JsonParser* parser = json_parser_new();
    EXPECT_TRUE(json_parser_load_from_data(parser, line.c_str(), -1, nullptr)) << line;
    nodes.push_back(json_node_copy(json_parser_get_root(parser)));
    g_object_unref(parser);
  }
  return nodes;
}

}  // namespace gsttest

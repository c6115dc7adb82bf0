// taconitepublish messages=tracks|both through GstHarness: new / update / end events in order,
// ends at EOS, on flush and when lost, the max-tracks bound, the best face (kept only when better,
// retention by count and bytes, base64 inline) and start errors for unusable settings.
#include <glib/gstdio.h>
#include <unistd.h>

#include <opencv2/imgcodecs.hpp>
#include <set>

#include "gst_test_support.hpp"
#include "publish_frames.hpp"

namespace {

using namespace gsttest;

struct Face {
  int track;
  double quality = -1.0;      // < 0: no quality param
  const char* state = nullptr;  // label_state; null: no identity param
  const char* label = nullptr;  // decided label
  int label_id = 0;
};

// A 320x240 RGB frame (a pattern, so crops are not empty) with one face ROI per entry at
// (10 + 60 i, 20) 40x40 with 5 landmarks, its object_id, quality and identity.
GstBuffer* tracked_frame(int index, const std::vector<Face>& faces) {
  GstBuffer* buffer = rgb_buffer(320, 240, [](int x, int y) {
    return std::array<std::uint8_t, 3>{static_cast<std::uint8_t>(x), static_cast<std::uint8_t>(y), 90};
  });
  GST_BUFFER_PTS(buffer) = index * kFrame;
  GST_BUFFER_DURATION(buffer) = kFrame;
  for (std::size_t i = 0; i < faces.size(); ++i) {
    const Face& f = faces[i];
    const guint x = 10 + 60 * i, y = 20;
    GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(buffer, "face", x, y, 40, 40);
    roi->id = 1 + static_cast<int>(i);
    gst_video_region_of_interest_meta_add_param(roi,
                                                gst_structure_new("object_id", "id", G_TYPE_INT, f.track, nullptr));
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
    if (f.quality >= 0)
      gst_video_region_of_interest_meta_add_param(
          roi, gst_structure_new("quality", "score", G_TYPE_DOUBLE, f.quality, nullptr));
    if (f.state) {
      GstStructure* identity = gst_structure_new("identity", "label_state", G_TYPE_STRING, f.state, nullptr);
      if (f.label)
        gst_structure_set(identity, "label", G_TYPE_STRING, f.label, "label_id", G_TYPE_INT, f.label_id, "confidence",
                          G_TYPE_DOUBLE, 0.8, nullptr);
      gst_video_region_of_interest_meta_add_param(roi, identity);
    }
  }
  return buffer;
}

class TrackEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gchar* dir = g_dir_make_tmp("taconite-tracks-XXXXXX", nullptr);
    ASSERT_NE(dir, nullptr);
    dir_ = dir;
    g_free(dir);
    path_ = dir_ + "/events.jsonl";
    faces_ = dir_ + "/faces";
  }
  void TearDown() override {
    if (h_) gst_harness_teardown(h_);
    for (JsonNode* n : nodes_) json_node_unref(n);
    if (GDir* d = g_dir_open(faces_.c_str(), 0, nullptr)) {
      while (const gchar* name = g_dir_read_name(d)) g_remove((faces_ + "/" + name).c_str());
      g_dir_close(d);
    }
    g_rmdir(faces_.c_str());
    g_remove(path_.c_str());
    g_rmdir(dir_.c_str());
  }
  void start(std::vector<std::pair<std::string, std::string>> props, const std::string& stream = "door") {
    props.emplace_back("location", path_);
    props.emplace_back("stream", stream);
    h_ = publish_harness(props);
    ASSERT_NE(h_, nullptr);
  }
  void push(int index, const std::vector<Face>& faces) {
    ASSERT_EQ(gst_harness_push(h_, tracked_frame(index, faces)), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h_));
  }
  void new_segment() {  // a flush resets the segment
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_TIME);
    ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_segment(&segment)));
  }
  void eos() { ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_eos())); }
  // Drops the objects events() returned (a test reading the file again).
  void forget_events() {
    for (JsonNode* n : nodes_) json_node_unref(n);
    nodes_.clear();
  }
  // Every line of the file as a JSON object (all of them track events here).
  std::vector<JsonObject*> events() {
    std::vector<JsonObject*> out;
    for (const std::string& line : file_lines(path_)) {
      JsonParser* parser = json_parser_new();
      EXPECT_TRUE(json_parser_load_from_data(parser, line.c_str(), -1, nullptr)) << line;
      JsonNode* node = json_node_copy(json_parser_get_root(parser));
      g_object_unref(parser);
      nodes_.push_back(node);
      JsonObject* o = json_node_get_object(node);
      EXPECT_STREQ(json_object_get_string_member(o, "schema"), "taconite-tracks/1");
      out.push_back(o);
    }
    return out;
  }
  static std::string kind(JsonObject* o) { return json_object_get_string_member(o, "event"); }
  static gint64 track(JsonObject* o) { return json_object_get_int_member(o, "track_id"); }
  static std::string text(JsonObject* o, const char* member) {
    return json_object_get_null_member(o, member) ? "null" : json_object_get_string_member(o, member);
  }
  static double best_quality(JsonObject* o) {
    if (json_object_get_null_member(o, "best_face")) return -1;
    return json_object_get_double_member(json_object_get_object_member(o, "best_face"), "quality");
  }

  GstHarness* h_ = nullptr;
  std::string dir_, path_, faces_;
  std::vector<JsonNode*> nodes_;
};

TEST_F(TrackEventsTest, NewUpdateOnDecisionEndWhenLostWithDwellAndFrames) {
  start({{"messages", "tracks"}, {"track-timeout", "3"}});
  push(0, {{7, -1, "pending"}});
  push(1, {{7, -1, "pending"}});
  push(2, {{7, -1, "known", "alice", 3}});
  push(3, {{7, -1, "known", "alice", 3}});
  push(4, {{7, -1, "known", "alice", 3}});
  for (int i = 5; i <= 7; ++i) push(i, {});
  EXPECT_EQ(events().size(), 2u) << "not seen for 3 frames: still open";
  forget_events();
  push(8, {});
  const std::vector<JsonObject*> e = events();
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(kind(e[0]), "new");
  EXPECT_EQ(text(e[0], "label_state"), "pending");
  EXPECT_EQ(text(e[0], "label"), "null");
  EXPECT_EQ(json_object_get_int_member(e[0], "pts_ns"), 0);
  EXPECT_EQ(kind(e[1]), "update");
  EXPECT_EQ(text(e[1], "label_state"), "known");
  EXPECT_EQ(text(e[1], "label"), "alice");
  EXPECT_EQ(json_object_get_int_member(e[1], "pts_ns"), static_cast<gint64>(2 * kFrame));
  EXPECT_EQ(kind(e[2]), "end");
  EXPECT_EQ(text(e[2], "reason"), "lost");
  EXPECT_EQ(json_object_get_int_member(e[2], "label_id"), 3);
  EXPECT_DOUBLE_EQ(json_object_get_double_member(e[2], "confidence"), 0.8);
  EXPECT_EQ(json_object_get_int_member(e[2], "frames"), 5);
  EXPECT_DOUBLE_EQ(json_object_get_double_member(e[2], "dwell_s"), 4.0 * kFrame / GST_SECOND);
  for (JsonObject* o : e) EXPECT_EQ(track(o), 7);
  EXPECT_EQ(counter(h_->element, "messages-published"), 3u);
  eos();
  forget_events();
  EXPECT_EQ(events().size(), 3u) << "an ended track does not end again at EOS";
}

TEST_F(TrackEventsTest, EveryOpenTrackEndsAtEos) {
  start({{"messages", "tracks"}});
  push(0, {{1}, {2}});
  push(1, {{2}});
  eos();
  const std::vector<JsonObject*> e = events();
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(kind(e[0]) + kind(e[1]) + kind(e[2]) + kind(e[3]), "newnewendend");
  std::set<gint64> ended{track(e[2]), track(e[3])};
  EXPECT_EQ(ended, (std::set<gint64>{1, 2}));
  for (JsonObject* o : {e[2], e[3]}) {
    EXPECT_EQ(text(o, "reason"), "eos");
    EXPECT_EQ(text(o, "label_state"), "null") << "no identity param: no taconiteidentify";
    EXPECT_EQ(json_object_get_int_member(o, "frames"), track(o) == 1 ? 1 : 2);
  }
}

TEST_F(TrackEventsTest, EveryOpenTrackEndsOnFlush) {
  start({{"messages", "both"}});
  push(0, {{1}});
  ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_flush_start()));
  ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_flush_stop(TRUE)));
  const std::vector<std::string> lines = file_lines(path_);
  ASSERT_EQ(lines.size(), 3u) << "the frame document, new, end";
  EXPECT_NE(lines[0].find("\"schema\":\"taconite-faces/1\""), std::string::npos);
  EXPECT_NE(lines[2].find("\"event\":\"end\""), std::string::npos);
  EXPECT_NE(lines[2].find("\"reason\":\"flush\""), std::string::npos);
}

TEST_F(TrackEventsTest, MaxTracksEndsTheLeastRecentlySeen) {
  start({{"messages", "tracks"}, {"max-tracks", "2"}});
  push(0, {{1}});
  push(1, {{2}});
  push(2, {{2}, {3}});
  const std::vector<JsonObject*> e = events();
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(kind(e[2]), "end");
  EXPECT_EQ(track(e[2]), 1);
  EXPECT_EQ(text(e[2], "reason"), "evicted");
  EXPECT_EQ(kind(e[3]), "new");
  EXPECT_EQ(track(e[3]), 3);
  EXPECT_EQ(counter(h_->element, "tracks-evicted"), 1u);
}

TEST_F(TrackEventsTest, BestFaceReplacedOnlyByABetterOne) {
  start({{"messages", "tracks"}, {"best-face", "path"}, {"best-face-dir", faces_}});
  push(0, {{5, 0.5}});
  push(1, {{5, 0.3}});
  push(2, {{5, 0.7}});
  push(3, {{5, 0.6}});
  eos();
  std::vector<double> updates;
  JsonObject* end = nullptr;
  for (JsonObject* o : events()) {
    if (kind(o) == "update") updates.push_back(best_quality(o));
    if (kind(o) == "end") end = o;
  }
  // The writer is asynchronous: each better face gives one update once written (0.5 may be
  // superseded before the next frame, but 0.3 and 0.6 never appear).
  ASSERT_FALSE(updates.empty());
  for (double q : updates) EXPECT_TRUE(q == 0.5 || q == 0.7) << q;
  EXPECT_DOUBLE_EQ(updates.back(), 0.7);
  ASSERT_NE(end, nullptr);
  EXPECT_DOUBLE_EQ(best_quality(end), 0.7);
  const std::string path = json_object_get_string_member(json_object_get_object_member(end, "best_face"), "path");
  EXPECT_EQ(path, faces_ + "/door-5.jpg");
  const cv::Mat image = cv::imread(path);
  ASSERT_FALSE(image.empty());
  EXPECT_EQ(image.cols, 112);
  EXPECT_EQ(image.rows, 112);
  EXPECT_EQ(counter(h_->element, "best-faces-dropped"), 0u);
}

std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> names;
  if (GDir* d = g_dir_open(dir.c_str(), 0, nullptr)) {
    while (const gchar* name = g_dir_read_name(d)) names.insert(name);
    g_dir_close(d);
  }
  return names;
}

TEST_F(TrackEventsTest, RetentionKeepsTheNewestFilesWithinCount) {
  start({{"messages", "tracks"}, {"best-face", "path"}, {"best-face-dir", faces_}, {"best-face-max-files", "2"}});
  for (int t = 1; t <= 3; ++t) {
    push(t, {{t, 0.5}});
    ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_flush_start()));  // ends the track, drains the writer
    ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_flush_stop(TRUE)));
    new_segment();
  }
  EXPECT_EQ(files_in(faces_), (std::set<std::string>{"door-2.jpg", "door-3.jpg"}));
}

TEST_F(TrackEventsTest, RetentionKeepsOnlyTheNewestWhenBytesAreExceeded) {
  start({{"messages", "tracks"}, {"best-face", "path"}, {"best-face-dir", faces_}, {"best-face-max-bytes", "1"}});
  for (int t = 1; t <= 3; ++t) {
    push(t, {{t, 0.5}});
    ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_flush_start()));
    ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_flush_stop(TRUE)));
    new_segment();
  }
  EXPECT_EQ(files_in(faces_), (std::set<std::string>{"door-3.jpg"}));
}

TEST_F(TrackEventsTest, Base64InlinesTheJpeg) {
  start({{"messages", "tracks"}, {"best-face", "base64"}});
  push(0, {{9, 0.4}});
  eos();
  const std::vector<JsonObject*> e = events();
  ASSERT_FALSE(e.empty());
  JsonObject* end = e.back();
  ASSERT_EQ(kind(end), "end");
  ASSERT_FALSE(json_object_get_null_member(end, "best_face"));
  JsonObject* face = json_object_get_object_member(end, "best_face");
  EXPECT_FALSE(json_object_has_member(face, "path"));
  gsize size = 0;
  guchar* jpeg = g_base64_decode(json_object_get_string_member(face, "jpeg_base64"), &size);
  const cv::Mat image = cv::imdecode(std::vector<guchar>(jpeg, jpeg + size), cv::IMREAD_COLOR);
  g_free(jpeg);
  ASSERT_FALSE(image.empty());
  EXPECT_EQ(image.size(), cv::Size(112, 112));
  EXPECT_TRUE(files_in(faces_).empty());
}

// The stream name becomes part of a file name: it cannot leave the directory or hide the file.
TEST_F(TrackEventsTest, AStreamNameCannotLeaveTheBestFaceDirectory) {
  start({{"messages", "tracks"}, {"best-face", "path"}, {"best-face-dir", faces_}}, "../x/door");
  push(0, {{4, 0.5}});
  eos();
  EXPECT_EQ(files_in(faces_), (std::set<std::string>{"_.._x_door-4.jpg"}));
  EXPECT_FALSE(g_file_test((dir_ + "/x").c_str(), G_FILE_TEST_EXISTS));
  const std::vector<JsonObject*> e = events();
  ASSERT_FALSE(e.empty());
  EXPECT_STREQ(json_object_get_string_member(e.back(), "stream"), "../x/door") << "the events keep the name";
}

void expect_start_error(const std::vector<std::pair<std::string, std::string>>& properties,
                        const std::string& expected) {
  GstElement* element = gst_element_factory_make("taconitepublish", nullptr);
  for (const auto& [name, value] : properties) gst_util_set_object_arg(G_OBJECT(element), name.c_str(), value.c_str());
  const StartFailure failure = start_paused(element);
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(failure.message.find(expected), std::string::npos) << "message: " << failure.message;
}

TEST(TrackEventsErrorsTest, UnusableBestFaceSettingsFailTheStartNamingThem) {
  gchar* dir = g_dir_make_tmp("taconite-tracks-XXXXXX", nullptr);
  const std::string file = std::string(dir) + "/not-a-dir";
  ASSERT_TRUE(g_file_set_contents(file.c_str(), "x", 1, nullptr));
  expect_start_error({{"location", "/dev/null"}, {"messages", "tracks"}, {"best-face", "path"}, {"best-face-dir", file}},
                     "best-face-dir '" + file + "' is not a directory this process can write to");
  const std::string read_only = std::string(dir) + "/read-only";
  ASSERT_EQ(g_mkdir(read_only.c_str(), 0555), 0);
  if (geteuid() != 0)  // root writes anywhere
    expect_start_error(
        {{"location", "/dev/null"}, {"messages", "tracks"}, {"best-face", "path"}, {"best-face-dir", read_only}},
        "best-face-dir '" + read_only + "'");
  expect_start_error({{"location", "/dev/null"}, {"messages", "tracks"}, {"best-face", "path"}},
                     "best-face=path needs a directory");
  expect_start_error({{"method", "mqtt"}, {"messages", "tracks"}, {"tracks-topic", "cams/+/tracks"}},
                     "MQTT topic 'cams/+/tracks' is not a valid topic");
  g_remove(file.c_str());
  g_rmdir(read_only.c_str());
  g_rmdir(dir);
  g_free(dir);
}

TEST(TrackEventsErrorsTest, OutOfRangeValuesAreRefused) {
  GstElement* element = gst_element_factory_make("taconitepublish", nullptr);
  guint timeout = 0, tracks = 0;
  g_object_get(element, "track-timeout", &timeout, "max-tracks", &tracks, nullptr);
  EXPECT_EQ(timeout, 30u);
  EXPECT_EQ(tracks, 256u);
  GParamSpec* spec = g_object_class_find_property(G_OBJECT_GET_CLASS(element), "max-tracks");
  EXPECT_EQ(G_PARAM_SPEC_UINT(spec)->minimum, 1u);
  spec = g_object_class_find_property(G_OBJECT_GET_CLASS(element), "track-timeout");
  EXPECT_EQ(G_PARAM_SPEC_UINT(spec)->minimum, 1u);
  gst_object_unref(element);
}

}  // namespace

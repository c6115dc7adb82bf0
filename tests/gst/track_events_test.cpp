// taconitepublish messages=tracks|both through GstHarness: new / update / end events in order,
// ends at EOS, on flush and when lost, the max-tracks bound, the best face (kept only when better,
// retention by count and bytes, base64 inline) and start errors for unusable settings.
#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <opencv2/imgcodecs.hpp>
#include <set>

#include "gst_test_support.hpp"
#include "publish_frames.hpp"
#include "track_events.hpp"

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
  void start(std::vector<std::pair<std::string, std::string>> props, const std::string& stream = "door",
             GstBus* bus = nullptr) {
    props.emplace_back("location", path_);
    props.emplace_back("stream", stream);
    h_ = publish_harness(props, bus);
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
    for (JsonNode* node : json_line_nodes(path_)) {
      nodes_.push_back(node);
      JsonObject* o = json_node_get_object(node);
      EXPECT_STREQ(json_object_get_string_member(o, "schema"), "taconite-tracks/1");
      out.push_back(o);
    }
    return out;
  }
  static std::string kind(JsonObject* o) { return json_object_get_string_member(o, "event"); }
  static gint64 track(JsonObject* o) { return json_object_get_int_member(o, "track_id"); }
  static std::string uid(JsonObject* o) { return json_object_get_string_member(o, "uid"); }
  static std::string best_path(JsonObject* o) {
    if (json_object_get_null_member(o, "best_face")) return "";
    return json_object_get_string_member(json_object_get_object_member(o, "best_face"), "path");
  }
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
  EXPECT_TRUE(json_object_get_boolean_member(e[2], "identified"));
  EXPECT_DOUBLE_EQ(json_object_get_double_member(e[2], "dwell_s"), 4.0 * kFrame / GST_SECOND);
  for (JsonObject* o : e) EXPECT_EQ(track(o), 7);
  EXPECT_EQ(counter(h_->element, "messages-published"), 3u);
  eos();
  forget_events();
  EXPECT_EQ(events().size(), 3u) << "an ended track does not end again at EOS";
}

// Seconds since 1970 of an ISO "utc" member (GLib's parser, independent of the element's formatting).
double iso_epoch(const std::string& iso) {
  GDateTime* t = g_date_time_new_from_iso8601(iso.c_str(), nullptr);
  if (!t) return -1;
  const double seconds = static_cast<double>(g_date_time_to_unix(t)) + g_date_time_get_microsecond(t) / 1e6;
  g_date_time_unref(t);
  return seconds;
}

// Issue 34: every event has epoch_s, the instant of its utc; an end also first/last_epoch_s.
TEST_F(TrackEventsTest, EveryEventCarriesEpochSecondsOfItsUtc) {
  const double before = static_cast<double>(g_get_real_time()) / 1e6;
  start({{"messages", "tracks"}});
  push(0, {{4, -1, "pending"}});
  push(1, {{4, -1, "known", "alice", 3}});
  eos();
  const double after = static_cast<double>(g_get_real_time()) / 1e6;
  const std::vector<JsonObject*> e = events();
  ASSERT_EQ(e.size(), 3u);
  for (JsonObject* o : e) {
    ASSERT_TRUE(json_object_has_member(o, "epoch_s")) << kind(o);
    const double epoch = json_object_get_double_member(o, "epoch_s");
    EXPECT_NEAR(epoch, iso_epoch(text(o, "utc")), 1e-6) << kind(o);
    EXPECT_GE(epoch, before - 1e-6);
    EXPECT_LE(epoch, after + 1e-6);
    EXPECT_EQ(uid(o), uid(e[0])) << "the uid is on every event";
  }
  ASSERT_EQ(kind(e[2]), "end");
  EXPECT_NEAR(json_object_get_double_member(e[2], "first_epoch_s"), iso_epoch(text(e[2], "first_utc")), 1e-6);
  EXPECT_NEAR(json_object_get_double_member(e[2], "last_epoch_s"), iso_epoch(text(e[2], "last_utc")), 1e-6);
  EXPECT_LE(json_object_get_double_member(e[2], "first_epoch_s"), json_object_get_double_member(e[2], "last_epoch_s"));
  EXPECT_FALSE(json_object_has_member(e[0], "first_epoch_s")) << "only an end has the track's span";
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
    EXPECT_TRUE(json_object_get_null_member(o, "identified")) << "nothing to say without taconiteidentify";
    EXPECT_EQ(json_object_get_int_member(o, "frames"), track(o) == 1 ? 1 : 2);
  }
}

// Issue 30: a track never ends pending. One taconiteidentify never judged (it left before any of its
// embeddings was searched) ends unknown with identified=false; decided ones end as decided.
TEST_F(TrackEventsTest, ATrackNeverJudgedEndsUnknownNotPending) {
  start({{"messages", "tracks"}, {"track-timeout", "1"}});
  push(0, {{4, -1, "pending"}, {7, -1, "pending"}, {8, -1, "unknown", "unknown", -1}});
  push(1, {{4, -1, "pending"}, {7, -1, "known", "alice", 3}, {8, -1, "unknown", "unknown", -1}});
  push(2, {{7, -1, "known", "alice", 3}});
  push(3, {{7, -1, "known", "alice", 3}});  // track 4 and 8 are lost here
  eos();
  std::map<gint64, JsonObject*> ends;
  for (JsonObject* o : events()) {
    if (kind(o) == "new" && track(o) == 4) {
      EXPECT_EQ(text(o, "label_state"), "pending");  // while it lasts
    }
    if (kind(o) == "end") ends[track(o)] = o;
  }
  ASSERT_EQ(ends.size(), 3u);
  JsonObject* never = ends.at(4);
  EXPECT_EQ(text(never, "reason"), "lost");
  EXPECT_EQ(text(never, "label_state"), "unknown");
  EXPECT_EQ(text(never, "label"), "unknown");
  EXPECT_EQ(json_object_get_int_member(never, "label_id"), -1);
  EXPECT_TRUE(json_object_get_null_member(never, "confidence")) << "no similarity was judged";
  EXPECT_FALSE(json_object_get_boolean_member(never, "identified"));
  EXPECT_EQ(text(ends.at(7), "label_state"), "known");
  EXPECT_EQ(text(ends.at(7), "reason"), "eos");
  EXPECT_TRUE(json_object_get_boolean_member(ends.at(7), "identified"));
  EXPECT_EQ(text(ends.at(8), "label_state"), "unknown");
  EXPECT_DOUBLE_EQ(json_object_get_double_member(ends.at(8), "confidence"), 0.8);
  EXPECT_TRUE(json_object_get_boolean_member(ends.at(8), "identified"));
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
  EXPECT_EQ(path, faces_ + "/door-" + uid(end) + ".jpg");
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

// The file names of the best faces the `end` events name, in order.
std::vector<std::string> ended_files(const std::vector<JsonObject*>& events) {
  std::vector<std::string> names;
  for (JsonObject* o : events)
    if (std::string(json_object_get_string_member(o, "event")) == "end" && !json_object_get_null_member(o, "best_face"))
      names.push_back(std::filesystem::path(
                          json_object_get_string_member(json_object_get_object_member(o, "best_face"), "path"))
                          .filename()
                          .string());
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
  const std::vector<std::string> ended = ended_files(events());
  ASSERT_EQ(ended.size(), 3u);
  EXPECT_EQ(files_in(faces_), (std::set<std::string>{ended[1], ended[2]}));
}

TEST_F(TrackEventsTest, RetentionKeepsOnlyTheNewestWhenBytesAreExceeded) {
  start({{"messages", "tracks"}, {"best-face", "path"}, {"best-face-dir", faces_}, {"best-face-max-bytes", "1"}});
  for (int t = 1; t <= 3; ++t) {
    push(t, {{t, 0.5}});
    ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_flush_start()));
    ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_flush_stop(TRUE)));
    new_segment();
  }
  const std::vector<std::string> ended = ended_files(events());
  ASSERT_EQ(ended.size(), 3u);
  EXPECT_EQ(files_in(faces_), (std::set<std::string>{ended[2]}));
}

// Issue 29, bug 8: a second run (ids from 1 again) never overwrites the first run's best face: each
// track has a uid, in every one of its events and in its file's name.
TEST_F(TrackEventsTest, ASecondRunNeverOverwritesTheFirstRunsBestFace) {
  std::vector<std::string> paths, uids;
  for (int run = 0; run < 2; ++run) {
    start({{"messages", "tracks"}, {"best-face", "path"}, {"best-face-dir", faces_}});
    push(0, {{1, 0.5}});
    push(1, {{1, 0.5}});
    eos();
    gst_harness_teardown(h_);
    h_ = nullptr;
    const std::vector<JsonObject*> e = events();
    ASSERT_GE(e.size(), 2u);
    std::set<std::string> track_uids;
    for (JsonObject* o : e) track_uids.insert(uid(o));
    ASSERT_EQ(track_uids.size(), 1u) << "run " << run << ": one track, one uid in all its events";
    EXPECT_TRUE(g_uuid_string_is_valid(uid(e[0]).c_str())) << uid(e[0]);
    uids.push_back(uid(e.back()));
    paths.push_back(best_path(e.back()));
    EXPECT_EQ(paths.back(), faces_ + "/door-" + uids.back() + ".jpg");
    forget_events();
  }
  EXPECT_NE(uids[0], uids[1]);
  EXPECT_NE(paths[0], paths[1]) << "track 1 of the second run is another face";
  EXPECT_TRUE(g_file_test(paths[0].c_str(), G_FILE_TEST_IS_REGULAR)) << "the first run's end event still holds";
  EXPECT_TRUE(g_file_test(paths[1].c_str(), G_FILE_TEST_IS_REGULAR));
}

// Retention counts this stream's files of earlier runs (oldest first) and never deletes any other
// file: not another stream's, not one named like ours without a uid, not one of another name.
TEST_F(TrackEventsTest, RetentionDeletesOnlyThisStreamsOwnFilesEarlierRunsIncluded) {
  ASSERT_EQ(g_mkdir_with_parents(faces_.c_str(), 0755), 0);
  const std::string older = "door-00000000-0000-4000-8000-000000000001.jpg";
  const std::string newer = "door-00000000-0000-4000-8000-000000000002.jpg";
  const std::vector<std::string> others = {"door-1.jpg", "door-7.jpg.part", "notes.txt", "door-x.jpg",
                                           "cam-00000000-0000-4000-8000-000000000003.jpg",
                                           "door-00000000-0000-4000-8000-000000000004.png"};
  for (const std::string& name : others) ASSERT_TRUE(g_file_set_contents((faces_ + "/" + name).c_str(), "x", 1, nullptr));
  int age = 2;
  for (const std::string& name : {older, newer}) {
    const std::string path = faces_ + "/" + name;
    ASSERT_TRUE(g_file_set_contents(path.c_str(), "jpeg", 4, nullptr));
    const time_t mtime = time(nullptr) - 3600 * age--;  // hours old: older first
    const struct timespec times[2] = {{mtime, 0}, {mtime, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  }
  start({{"messages", "tracks"}, {"best-face", "path"}, {"best-face-dir", faces_}, {"best-face-max-files", "2"}});
  push(0, {{1, 0.5}});
  eos();
  const std::vector<std::string> ended = ended_files(events());
  ASSERT_EQ(ended.size(), 1u);
  std::set<std::string> expected(others.begin(), others.end());
  expected.insert({newer, ended[0]});
  EXPECT_EQ(files_in(faces_), expected) << "the oldest of ours went; nothing else";
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
  const std::vector<std::string> ended = ended_files(events());
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].rfind("_.._x_door-", 0), 0u) << ended[0];
  EXPECT_EQ(files_in(faces_), (std::set<std::string>{ended[0]}));
  EXPECT_FALSE(g_file_test((dir_ + "/x").c_str(), G_FILE_TEST_EXISTS));
  const std::vector<JsonObject*> e = events();
  ASSERT_FALSE(e.empty());
  EXPECT_STREQ(json_object_get_string_member(e.back(), "stream"), "../x/door") << "the events keep the name";
}

// Issue 29: a stop without EOS (the pipeline set to NULL) still ends every open track, reason
// "stopped", written before the file closes; tracks that ended at EOS do not end again.
TEST_F(TrackEventsTest, OpenTracksEndWhenTheElementStopsWithoutEos) {
  start({{"messages", "tracks"}, {"best-face", "path"}, {"best-face-dir", faces_}});
  push(0, {{1, 0.5}, {2}});
  push(1, {{1, 0.5}});
  ASSERT_EQ(gst_element_set_state(h_->element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  std::vector<JsonObject*> e = events();
  std::map<gint64, JsonObject*> ends;
  for (JsonObject* o : e)
    if (kind(o) == "end") ends[track(o)] = o;
  ASSERT_EQ(ends.size(), 2u) << "every open track ended";
  for (const auto& [id, end] : ends) {
    EXPECT_EQ(text(end, "reason"), "stopped") << "track " << id;
    EXPECT_EQ(json_object_get_int_member(end, "last_pts_ns"), id == 1 ? static_cast<gint64>(kFrame) : 0);
  }
  EXPECT_EQ(kind(e.back()), "end") << "nothing after the ends";
  const std::string best = best_path(ends[1]);
  EXPECT_TRUE(g_file_test(best.c_str(), G_FILE_TEST_IS_REGULAR)) << "the face being written was waited for: " << best;
  gst_harness_teardown(h_);
  h_ = nullptr;
  forget_events();

  start({{"messages", "tracks"}});
  push(0, {{3}});
  eos();
  ASSERT_EQ(gst_element_set_state(h_->element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  e = events();
  ASSERT_EQ(e.size(), 2u) << "new and end (eos); the stop ends nothing more";
  EXPECT_EQ(text(e[1], "reason"), "eos");
}

// The directory of the best faces made unwritable while playing: a tmpfs of 64 KiB filled up when
// the test may mount one (root), else the honest substitute, the directory replaced by a file.
class UnwritableDirectory {
 public:
  explicit UnwritableDirectory(std::string dir) : dir_(std::move(dir)) {
    g_mkdir_with_parents(dir_.c_str(), 0755);
    mounted_ = mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=64k") == 0;
  }
  ~UnwritableDirectory() {
    restore();
    if (mounted_) umount(dir_.c_str());
  }
  bool full_filesystem() const { return mounted_; }
  void break_it() {
    if (mounted_) {  // fill it: nothing more fits
      const int fd = g_open(filler().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const std::vector<char> block(4096, 'x');
      while (fd >= 0 && write(fd, block.data(), block.size()) > 0) {
      }
      if (fd >= 0) close(fd);
    } else {
      g_rename(dir_.c_str(), (dir_ + ".away").c_str());
      g_file_set_contents(dir_.c_str(), "x", 1, nullptr);
    }
    broken_ = true;
  }
  void restore() {
    if (!broken_) return;
    broken_ = false;
    if (mounted_) {
      g_remove(filler().c_str());
    } else {
      g_remove(dir_.c_str());
      g_rename((dir_ + ".away").c_str(), dir_.c_str());
    }
  }

 private:
  std::string filler() const { return dir_ + "/filler.bin"; }
  std::string dir_;
  bool mounted_ = false, broken_ = false;
};

// The texts of the warnings and the infos on the bus (every message is taken off it).
struct BusTexts {
  std::vector<std::string> warnings, infos;
};
BusTexts bus_texts(GstBus* bus) {
  BusTexts texts;
  while (GstMessage* m = gst_bus_pop(bus)) {
    GError* error = nullptr;
    gchar* debug = nullptr;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING) {
      gst_message_parse_warning(m, &error, &debug);
      texts.warnings.emplace_back(error->message);
    } else if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_INFO) {
      gst_message_parse_info(m, &error, &debug);
      texts.infos.emplace_back(error->message);
    }
    g_clear_error(&error);
    g_free(debug);
    gst_message_unref(m);
  }
  return texts;
}

// Issue 29: every best face dropped on a full filesystem, with one warning for the episode (not
// one per face) and an info once writes work again.
TEST_F(TrackEventsTest, AnUnwritableBestFaceDirectoryWarnsOnceAndSaysWhenWritesWorkAgain) {
  UnwritableDirectory directory(faces_);
  RecordProperty("unwritable_by", directory.full_filesystem() ? "a full tmpfs" : "the directory replaced by a file");
  GstBus* bus = gst_bus_new();
  start({{"messages", "tracks"}, {"best-face", "path"}, {"best-face-dir", faces_}}, "door", bus);
  const auto drain = [&] {  // a flush ends the tracks and waits for the writer
    ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_flush_start()));
    ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_flush_stop(TRUE)));
    new_segment();
  };
  directory.break_it();
  for (int t = 1; t <= 4; ++t) push(t, {{t, 0.5}});
  drain();
  EXPECT_EQ(counter(h_->element, "best-faces-dropped"), 4u);
  BusTexts texts = bus_texts(bus);
  ASSERT_EQ(texts.warnings.size(), 1u) << "one warning for the episode, not one per face";
  EXPECT_NE(texts.warnings[0].find("best-faces-dropped"), std::string::npos) << texts.warnings[0];
  EXPECT_NE(texts.warnings[0].find(faces_), std::string::npos) << "names the file: " << texts.warnings[0];
  EXPECT_TRUE(texts.infos.empty());

  directory.restore();
  for (int t = 5; t <= 6; ++t) push(t, {{t, 0.5}});
  drain();
  EXPECT_EQ(counter(h_->element, "best-faces-dropped"), 4u);
  texts = bus_texts(bus);
  EXPECT_TRUE(texts.warnings.empty());
  ASSERT_EQ(texts.infos.size(), 1u);
  EXPECT_NE(texts.infos[0].find("again (4 dropped meanwhile)"), std::string::npos) << texts.infos[0];
  EXPECT_EQ(files_in(faces_).size(), 2u) << "tracks 5 and 6 written";
  gst_bus_set_flushing(bus, TRUE);  // queued messages hold the element, which holds the bus
  gst_harness_teardown(h_);
  h_ = nullptr;
  gst_object_unref(bus);
}

// Issue 29: with the writer's queue full, a better face costs nothing (no mapping, no alignment,
// no copy): it is counted dropped at once. Driven through TrackEvents with a queue of 0.
TEST(TrackEventsQueueTest, AFullWriterQueueSkipsTheAlignmentAndCountsTheFaceDropped) {
  for (const std::size_t max_queued : {std::size_t{0}, std::size_t{64}}) {
    taconite::gst::TrackEventsSettings settings;
    settings.stream = "door";
    settings.best_face.output = taconite::gst::BestFaceOutput::Base64;
    settings.best_face.max_queued = max_queued;
    taconite::Result<std::unique_ptr<taconite::gst::TrackEvents>> started = taconite::gst::TrackEvents::start(settings);
    ASSERT_TRUE(started) << started.error().message;
    std::unique_ptr<taconite::gst::TrackEvents> events = std::move(started.value());
    GstVideoInfo info;
    gst_video_info_set_format(&info, GST_VIDEO_FORMAT_RGB, 320, 240);
    for (int i = 0; i < 10; ++i) {  // two tracks, each face better than the last
      GstBuffer* buffer = tracked_frame(i, {{1, 0.1 + 0.05 * i}, {2, 0.1 + 0.05 * i}});
      events->frame(buffer, &info, taconite::gst::EventTime{g_get_real_time(), i * kFrame});
      gst_buffer_unref(buffer);
    }
    if (max_queued == 0) {
      EXPECT_EQ(events->faces_aligned(), 0u) << "no alignment for a face the queue refuses";
      EXPECT_EQ(events->faces_dropped(), 20u) << "each better face counted dropped";
    } else {
      EXPECT_EQ(events->faces_aligned(), 20u) << "with room every better face is aligned";
    }
  }
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

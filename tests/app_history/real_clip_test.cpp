// SnapshotWriter and EventHistory on a real clip through the real elements: the realfaces video
// (../shared/realfaces/video/short_hamilton_clip.mp4) decoded, faces found by taconitedetect
// (YuNet), tracked by taconitetrack, and taconitepublish's real track events (messages=tracks,
// a JSON-lines file) handed to both as taconite-run hands them. Skips, saying why, without the
// clip, the YuNet model or the plugin.
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>
#include <json-glib/json-glib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>
#include <string>
#include <vector>

#include "event_history.hpp"
#include "event_log_fixture.hpp"
#include "json_parse.hpp"
#include "snapshot_writer.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace taconite;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// One line of taconitepublish's events file as the runner parses it (the members used here).
std::optional<app::TrackEvent> parse_event(const std::string& line) {
  auto node = json::parse_json(line);
  if (!node || !JSON_NODE_HOLDS_OBJECT(node.value().get())) return std::nullopt;
  JsonObject* o = json_node_get_object(node.value().get());
  auto text = [&](const char* member) -> std::string {
    JsonNode* n = json_object_get_member(o, member);
    return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING ? json_node_get_string(n) : "";
  };
  if (text("schema") != "taconite-tracks/1") return std::nullopt;
  app::TrackEvent e;
  e.camera = text("stream");
  e.kind = text("event");
  e.uid = text("uid");
  e.track_id = json_object_get_int_member(o, "track_id");
  e.label_state = text("label_state");
  e.epoch_s = gallery::iso_to_epoch(text("utc")).value_or(0);
  e.reason = text("reason");
  e.document = line;
  if (e.kind == "end") {
    JsonNode* dwell = json_object_get_member(o, "dwell_s");
    if (dwell && JSON_NODE_HOLDS_VALUE(dwell)) e.dwell_s = json_node_get_double(dwell);
    e.frames = json_object_get_int_member(o, "frames");
  }
  return e;
}

TEST(RealClip, SnapshotsAndHistoryFromRealTrackEvents) {
  const std::string clip = env("TACONITE_REALFACES_DIR") + "/video/short_hamilton_clip.mp4";
  const std::string yunet = env("TACONITE_YUNET_MODEL");
  if (!fs::exists(clip)) GTEST_SKIP() << "no real clip at " << clip << " (../shared/realfaces is absent)";
  if (yunet.empty() || !fs::exists(yunet)) GTEST_SKIP() << "no YuNet model at '" << yunet << "'";
  gst_init(nullptr, nullptr);
  if (!gst_registry_find_plugin(gst_registry_get(), "taconite"))
    GTEST_SKIP() << "the taconite plugin is not on GST_PLUGIN_PATH";

  const fs::path dir = fs::temp_directory_path() / ("taconite-real-clip-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string gallery = (dir / "people.db").string();
  ASSERT_TRUE(gallery::GalleryStore::create(gallery, test::test_model(), test::kTestDim).ok());
  app::EventHistoryOptions h;
  h.gallery = gallery;
  auto history = app::EventHistory::start(h);
  ASSERT_TRUE(history.ok());
  app::SnapshotOptions s;
  s.dir = dir / "snapshots";
  s.max_width = 480;  // the 640x360 clip scaled to 480x270
  s.max_kept_frames = 64;
  s.keep_per_second = 100;
  app::EventHistory* recorder = history.value().get();
  s.on_snapshot = [recorder](const std::string&, const std::string& uid, const std::string& kind, const fs::path& path,
                             const std::vector<unsigned char>&) { recorder->set_snapshot(uid, kind, path.string()); };
  auto writer = app::SnapshotWriter::start(s);
  ASSERT_TRUE(writer.ok());

  const fs::path events = dir / "events.jsonl";
  const std::string description = "filesrc location=\"" + clip +
                                  "\" ! decodebin ! videoconvert ! video/x-raw,format=I420 ! taconitedetect model=\"" +
                                  yunet +
                                  "\" ! taconitetrack ! taconitepublish messages=tracks method=file location=\"" +
                                  events.string() + "\" stream=door1 ! appsink name=out sync=false";
  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launch(description.c_str(), &error);
  ASSERT_TRUE(pipeline) << (error ? error->message : "");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  ASSERT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  std::size_t frames = 0;
  std::ifstream lines;
  std::vector<app::TrackEvent> handled;
  std::string pending;
  // Events are handed over as they appear in the file, between frames, as the main loop would.
  auto read_events = [&] {
    if (!lines.is_open()) lines.open(events);
    if (!lines.is_open()) return;
    lines.clear();
    for (std::string line; std::getline(lines, line);) {
      if (lines.eof()) {  // a line not finished yet
        pending += line;
        break;
      }
      line = pending + line;
      pending.clear();
      if (auto e = parse_event(line)) {
        recorder->on_track_event(*e);
        writer.value()->on_track_event(*e);
        handled.push_back(*e);
      }
    }
  };
  for (GstSample* sample = nullptr; (g_signal_emit_by_name(sink, "pull-sample", &sample), sample);) {
    GstVideoInfo info;
    ASSERT_TRUE(gst_video_info_from_caps(&info, gst_sample_get_caps(sample)));
    writer.value()->on_frame("door1", gst_sample_get_buffer(sample), info);
    gst_sample_unref(sample);
    ++frames;
    read_events();
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);  // every open track ends
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  read_events();
  writer.value()->drain(20s);
  ASSERT_TRUE(history.value()->wait_idle(20s));

  EXPECT_EQ(frames, 275u);
  std::size_t ends = 0;
  for (const auto& e : handled) ends += e.kind == "end";
  ASSERT_GE(ends, 1u) << "no track ended in the clip";
  const auto stats = writer.value()->stats();
  EXPECT_GT(stats.frames_kept, 0u);
  EXPECT_EQ(stats.written + stats.no_frame, ends);  // no label_state: only end snapshots
  EXPECT_GE(stats.written, 1u);
  EXPECT_EQ(stats.write_errors, 0u);

  auto log = gallery::TrackEventLog::open(gallery, gallery::TrackEventLog::Access::ReadOnly);
  ASSERT_TRUE(log.ok());
  gallery::TrackEventFilter f;
  f.limit = gallery::kMaxEventQueryRows;
  auto rows = log.value().query(f);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows.value().size(), handled.size());
  std::size_t with_snapshot = 0;
  for (const auto& row : rows.value()) {
    if (row.snapshot.empty()) continue;
    ++with_snapshot;
    EXPECT_EQ(row.kind, "end");
    const cv::Mat image = cv::imread(row.snapshot);
    ASSERT_FALSE(image.empty()) << row.snapshot;
    EXPECT_EQ(image.cols, 480);
    EXPECT_EQ(image.rows, 270);
    // The box is drawn in yellow (no identity): the clip itself holds hardly any of that colour.
    int yellow = 0;
    for (int y = 0; y < image.rows; ++y)
      for (int x = 0; x < image.cols; ++x) {
        const cv::Vec3b p = image.at<cv::Vec3b>(y, x);
        yellow += p[0] < 60 && p[1] > 180 && p[2] > 180;
      }
    EXPECT_GT(yellow, 100) << row.snapshot;
  }
  EXPECT_EQ(with_snapshot, stats.written);
  std::printf("real clip: %zu frames, %zu events, %zu ends, %llu snapshots, %llu frame copies kept\n", frames,
              handled.size(), ends, static_cast<unsigned long long>(stats.written),
              static_cast<unsigned long long>(stats.frames_kept));
  writer.value().reset();
  history.value().reset();
  if (env("TACONITE_TEST_KEEP").empty()) fs::remove_all(dir);  // set it to look at the snapshots
}

}  // namespace

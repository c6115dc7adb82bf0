// SnapshotWriter and EventHistory wired as taconite-run wires them (EventHistory registered first;
// the writer's on_snapshot hands the path to EventHistory::set_snapshot): the end event stored in
// the gallery's log names the snapshot file, which exists.
#include <gst/gst.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "event_history.hpp"
#include "event_log_fixture.hpp"
#include "roi_track_param.hpp"
#include "snapshot_writer.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace taconite;

TEST(HistoryWithSnapshots, TheEndEventNamesItsSnapshot) {
  gst_init(nullptr, nullptr);
  const fs::path dir = fs::temp_directory_path() / ("taconite-history-snaps-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string gallery = (dir / "people.db").string();
  ASSERT_TRUE(gallery::GalleryStore::create(gallery, test::test_model(), test::kTestDim).ok());

  app::EventHistoryOptions h;
  h.gallery = gallery;
  auto history = app::EventHistory::start(h);
  ASSERT_TRUE(history.ok()) << history.error().message;
  app::SnapshotOptions s;
  s.dir = dir / "snapshots";
  app::EventHistory* recorder = history.value().get();
  s.on_snapshot = [recorder](const std::string&, const std::string& uid, const std::string& kind, const fs::path& path,
                             const std::vector<unsigned char>&) { recorder->set_snapshot(uid, kind, path.string()); };
  auto writer = app::SnapshotWriter::start(s);
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  std::vector<app::PipelineObserver*> observers = {history.value().get(), writer.value().get()};

  GstVideoInfo info;
  gst_video_info_set_format(&info, GST_VIDEO_FORMAT_I420, 320, 240);
  GstBuffer* buffer = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
  gst_buffer_memset(buffer, 0, 100, GST_VIDEO_INFO_SIZE(&info));
  gst::set_roi_track_id(gst_buffer_add_video_region_of_interest_meta(buffer, "face", 40, 40, 60, 60), 3, "uid-3");
  for (auto* o : observers) o->on_frame("door1", buffer, info);
  gst_buffer_unref(buffer);
  app::TrackEvent e;
  e.camera = "door1";
  e.uid = "uid-3";
  e.track_id = 3;
  e.epoch_s = 1796128024;
  e.label_state = "unknown";
  e.label = "unknown";
  e.label_id = -1;
  e.document = "{}";
  for (const char* kind : {"new", "end"}) {
    e.kind = kind;
    for (auto* o : observers) o->on_track_event(e);
  }
  writer.value()->drain(10s);
  ASSERT_TRUE(history.value()->wait_idle(10s));
  auto log = gallery::TrackEventLog::open(gallery, gallery::TrackEventLog::Access::ReadOnly);
  ASSERT_TRUE(log.ok());
  auto rows = log.value().query({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows.value().size(), 2u);
  // "new" was decided (label_state unknown) and snapshotted as such; "end" got its own.
  EXPECT_EQ(rows.value()[0].kind, "end");
  EXPECT_EQ(rows.value()[0].snapshot, (s.dir / "door1" / "2026-12-01" / "uid-3-end.jpg").string());
  EXPECT_TRUE(fs::exists(rows.value()[0].snapshot));
  EXPECT_EQ(rows.value()[1].snapshot, (s.dir / "door1" / "2026-12-01" / "uid-3-decided.jpg").string());
  writer.value().reset();
  history.value().reset();
  fs::remove_all(dir);
}

}  // namespace

// SnapshotWriter (app/snapshots) on GstBuffers with ROI metadata as taconitetrack leaves them
// (gst/common's set_roi_track_id): the box drawn where the face was, downscaled and bounded, the
// decided and end snapshots, rate-limited copies, retention by count, bytes and age, a full disk
// (RLIMIT_FSIZE with SIGXFSZ ignored) and an unwritable directory as counted drops, hostile names.
#include "snapshot_writer.hpp"

#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <opencv2/imgcodecs.hpp>
#include <string>
#include <vector>

#include "roi_track_param.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace taconite;
using app::SnapshotOptions;
using app::SnapshotWriter;
using app::TrackEvent;

struct Face {
  int x, y, w, h;
  gint64 id;
  std::string uid;
};

// A mid-grey I420 frame of width x height with one ROI a face.
GstBuffer* frame(int width, int height, const std::vector<Face>& faces, GstVideoInfo& info) {
  gst_video_info_set_format(&info, GST_VIDEO_FORMAT_I420, width, height);
  GstBuffer* buffer = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
  GstMapInfo map;
  gst_buffer_map(buffer, &map, GST_MAP_WRITE);
  std::memset(map.data, 128, map.size);
  gst_buffer_unmap(buffer, &map);
  for (const Face& f : faces) {
    GstVideoRegionOfInterestMeta* roi =
        gst_buffer_add_video_region_of_interest_meta(buffer, "face", static_cast<guint>(f.x), static_cast<guint>(f.y),
                                                     static_cast<guint>(f.w), static_cast<guint>(f.h));
    gst::set_roi_track_id(roi, f.id, f.uid);
  }
  return buffer;
}

TrackEvent event(const std::string& kind, const Face& f, const std::string& state = "known",
                 const std::string& camera = "door1") {
  TrackEvent e;
  e.camera = camera;
  e.kind = kind;
  e.uid = f.uid;
  e.track_id = f.id;
  e.epoch_s = 1796128024.5;  // 2026-12-01T12:27:04.5Z
  e.label_state = state;
  if (state == "known") e.label = "alice", e.label_id = 1, e.confidence = 0.83;
  return e;
}

class SnapshotWriterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { gst_init(nullptr, nullptr); }
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("taconite-snapshots-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  SnapshotOptions options() {
    SnapshotOptions o;
    o.dir = dir_;
    o.log = [this](const std::string& line) {
      std::lock_guard lock(mutex_);
      said_.push_back(line);
    };
    o.on_snapshot = [this](const std::string& camera, const std::string& uid, const std::string&, const fs::path& path,
                           const std::vector<unsigned char>& jpeg) {
      std::lock_guard lock(mutex_);
      published_.push_back({camera, uid, path, jpeg.size()});
    };
    return o;
  }
  std::unique_ptr<SnapshotWriter> start(const SnapshotOptions& o) {
    auto w = SnapshotWriter::start(o);
    EXPECT_TRUE(w.ok()) << w.error().message;
    return std::move(w.value());
  }
  // Offers a frame with these faces and sends `kind` for the first.
  void snap(SnapshotWriter& w, const std::vector<Face>& faces, const std::string& kind = "end",
            const std::string& camera = "door1", int width = 640, int height = 480) {
    GstVideoInfo info;
    GstBuffer* b = frame(width, height, faces, info);
    w.on_frame(camera, b, info);
    gst_buffer_unref(b);
    w.on_track_event(event(kind, faces[0], "known", camera));
    w.drain(10s);
  }
  std::size_t said(const std::string& text) {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& l : said_) n += l.find(text) != std::string::npos;
    return n;
  }
  std::vector<fs::path> jpegs() {
    std::vector<fs::path> found;
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      if (e.is_regular_file() && e.path().extension() == ".jpg") found.push_back(e.path());
    return found;
  }

  struct Published {
    std::string camera, uid;
    fs::path path;
    std::size_t bytes;
  };
  fs::path dir_;
  std::mutex mutex_;
  std::vector<std::string> said_;
  std::vector<Published> published_;
};

bool near_colour(const cv::Vec3b& pixel, const cv::Vec3b& expected) {
  for (int c = 0; c < 3; ++c)
    if (std::abs(pixel[c] - expected[c]) > 40) return false;
  return true;
}

TEST_F(SnapshotWriterTest, DrawsTheBoxWhereTheFaceWasOnADownscaledFrame) {
  auto w = start(options());
  // 1920x1080 with max_width 1280: everything scales by 2/3.
  const Face face{600, 300, 240, 300, 4, "4b0c58d2-5f3e-4f0e-9a6b-7f1d2c3e4a5b"};
  snap(*w, {face, {1500, 600, 150, 150, 5, "other-uid"}}, "end", "door1", 1920, 1080);
  const fs::path path = dir_ / "door1" / "2026-12-01" / (face.uid + "-end.jpg");
  ASSERT_TRUE(fs::exists(path)) << "missing " << path;
  const cv::Mat image = cv::imread(path.string());
  ASSERT_FALSE(image.empty());
  EXPECT_EQ(image.cols, 1280);
  EXPECT_EQ(image.rows, 720);
  const cv::Vec3b green(60, 200, 60), grey(128, 128, 128);
  // The left edge of the scaled box (x = 400, y = 200..400) is green; its inside stays grey.
  EXPECT_TRUE(near_colour(image.at<cv::Vec3b>(300, 400), green)) << image.at<cv::Vec3b>(300, 400);
  EXPECT_TRUE(near_colour(image.at<cv::Vec3b>(399, 480), green)) << image.at<cv::Vec3b>(399, 480);  // bottom edge
  EXPECT_TRUE(near_colour(image.at<cv::Vec3b>(300, 480), grey)) << image.at<cv::Vec3b>(300, 480);
  EXPECT_TRUE(near_colour(image.at<cv::Vec3b>(600, 200), grey));  // far from every face
  // The label's background sits just above the box.
  EXPECT_TRUE(near_colour(image.at<cv::Vec3b>(190, 402), green)) << image.at<cv::Vec3b>(190, 402);
  const auto s = w->stats();
  EXPECT_EQ(s.written, 1u);
  EXPECT_EQ(s.files, 1u);
  EXPECT_EQ(s.bytes, fs::file_size(path));
  ASSERT_EQ(published_.size(), 1u);
  EXPECT_EQ(published_[0].path, path);
  EXPECT_EQ(published_[0].bytes, fs::file_size(path));
  EXPECT_EQ(published_[0].uid, face.uid);
}

TEST_F(SnapshotWriterTest, OneDecidedSnapshotAndOneAtTheEnd) {
  auto w = start(options());
  const Face face{100, 100, 80, 80, 1, "u-1"};
  GstVideoInfo info;
  GstBuffer* b = frame(320, 240, {face}, info);
  w->on_frame("door1", b, info);
  gst_buffer_unref(b);
  w->on_track_event(event("new", face, "pending"));   // nothing decided yet
  w->on_track_event(event("update", face, "known"));  // decided
  w->on_track_event(event("update", face, "known"));  // already decided: no second one
  w->on_track_event(event("end", face, "known"));
  w->drain(10s);
  EXPECT_TRUE(fs::exists(dir_ / "door1" / "2026-12-01" / "u-1-decided.jpg"));
  EXPECT_TRUE(fs::exists(dir_ / "door1" / "2026-12-01" / "u-1-end.jpg"));
  EXPECT_EQ(w->stats().written, 2u);
  EXPECT_EQ(jpegs().size(), 2u);
  // Ended: its copy is forgotten, a second end has no frame.
  w->on_track_event(event("end", face, "known"));
  EXPECT_EQ(w->stats().no_frame, 1u);
}

TEST_F(SnapshotWriterTest, CopiesAreRateLimitedButANewTrackIsAlwaysKept) {
  SnapshotOptions o = options();
  o.keep_per_second = 1;
  auto w = start(o);
  GstVideoInfo info;
  for (const auto& faces :
       {std::vector<Face>{{10, 10, 50, 50, 1, "a"}}, std::vector<Face>{{12, 10, 50, 50, 1, "a"}},
        std::vector<Face>{{12, 10, 50, 50, 1, "a"}, {100, 10, 50, 50, 2, "b"}}, std::vector<Face>{}}) {
    GstBuffer* b = frame(320, 240, faces, info);
    w->on_frame("door1", b, info);
    gst_buffer_unref(b);
  }
  EXPECT_EQ(w->stats().frames_kept, 2u);  // the first, and the one with a new track
}

TEST_F(SnapshotWriterTest, AnEventWithoutAKeptFrameIsCounted) {
  auto w = start(options());
  w->on_track_event(event("end", {0, 0, 1, 1, 9, "never-seen"}));
  w->drain(10s);
  EXPECT_EQ(w->stats().no_frame, 1u);
  EXPECT_EQ(w->stats().written, 0u);
}

TEST_F(SnapshotWriterTest, RetentionByCountKeepsTheNewest) {
  SnapshotOptions o = options();
  o.max_files = 3;
  auto w = start(o);
  for (int i = 0; i < 5; ++i) snap(*w, {{10, 10, 50, 50, i, "t" + std::to_string(i)}});
  const auto s = w->stats();
  EXPECT_EQ(s.written, 5u);
  EXPECT_EQ(s.deleted, 2u);
  EXPECT_EQ(s.files, 3u);
  EXPECT_EQ(jpegs().size(), 3u);
  EXPECT_FALSE(fs::exists(dir_ / "door1" / "2026-12-01" / "t0-end.jpg"));
  EXPECT_TRUE(fs::exists(dir_ / "door1" / "2026-12-01" / "t4-end.jpg"));
}

TEST_F(SnapshotWriterTest, RetentionByBytes) {
  auto probe = start(options());
  snap(*probe, {{10, 10, 50, 50, 1, "probe"}});
  const std::uint64_t one = probe->stats().bytes;
  probe.reset();
  fs::remove_all(dir_);
  SnapshotOptions o = options();
  o.max_bytes = one * 2 + one / 2;  // room for two
  auto w = start(o);
  for (int i = 0; i < 4; ++i) snap(*w, {{10, 10, 50, 50, i, "t" + std::to_string(i)}});
  EXPECT_EQ(w->stats().files, 2u);
  EXPECT_LE(w->stats().bytes, o.max_bytes);
  EXPECT_EQ(jpegs().size(), 2u);
}

// Snapshots of an earlier run are found at start and the old ones deleted; files that are not
// snapshots are never touched.
TEST_F(SnapshotWriterTest, RetentionByAgeIncludesEarlierRunsAndSparesOtherFiles) {
  const fs::path old_day = dir_ / "door1" / "2020-01-01";
  fs::create_directories(old_day);
  for (const char* name : {"a-end.jpg", "b-end.jpg"}) {
    std::ofstream(old_day / name) << "old";
    fs::last_write_time(old_day / name, fs::file_time_type::clock::now() - std::chrono::hours(24 * 30));
  }
  std::ofstream(dir_ / "notes.jpg") << "not a snapshot";  // not DIR/<camera>/<date>/
  fs::create_directories(dir_ / "door1" / "misc");
  std::ofstream(dir_ / "door1" / "misc" / "keep.jpg") << "not a snapshot";
  SnapshotOptions o = options();
  o.max_age_s = 7 * 86400;
  auto w = start(o);
  EXPECT_EQ(w->stats().deleted, 2u);
  EXPECT_FALSE(fs::exists(old_day));  // emptied: removed
  snap(*w, {{10, 10, 50, 50, 1, "fresh"}});
  EXPECT_EQ(w->stats().files, 1u);
  EXPECT_TRUE(fs::exists(dir_ / "notes.jpg"));
  EXPECT_TRUE(fs::exists(dir_ / "door1" / "misc" / "keep.jpg"));
}

// A full disk, simulated: the file size limit below a snapshot's size (SIGXFSZ ignored, so write()
// fails with EFBIG). The snapshot is dropped and counted, logged once, no partial file is left, and
// the next write after the limit is lifted works.
TEST_F(SnapshotWriterTest, AFullDiskIsACountedDropLoggedOnce) {
  auto w = start(options());
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto* previous = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 200;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  snap(*w, {{10, 10, 50, 50, 1, "full1"}});
  snap(*w, {{10, 10, 50, 50, 2, "full2"}});
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous);
  auto s = w->stats();
  EXPECT_EQ(s.written, 0u);
  EXPECT_EQ(s.write_errors, 2u);
  EXPECT_EQ(s.dropped, 2u);
  EXPECT_EQ(said("dropped until a write works"), 1u);
  EXPECT_TRUE(jpegs().empty());
  for (const auto& e : fs::recursive_directory_iterator(dir_))
    EXPECT_FALSE(e.path().filename().string().starts_with(".tmp-")) << e.path();
  snap(*w, {{10, 10, 50, 50, 3, "after"}});
  EXPECT_EQ(w->stats().written, 1u);
  EXPECT_EQ(said("writing again"), 1u);
}

// The camera's directory cannot be made (a file is in its place; works as root too, unlike a mode).
TEST_F(SnapshotWriterTest, AnUnwritableDirectoryIsACountedDrop) {
  auto w = start(options());
  std::ofstream(dir_ / "door1") << "in the way";
  snap(*w, {{10, 10, 50, 50, 1, "blocked"}});
  EXPECT_EQ(w->stats().write_errors, 1u);
  EXPECT_EQ(said("cannot create the directory"), 1u);
  snap(*w, {{10, 10, 50, 50, 2, "elsewhere"}}, "end", "door2");  // another camera still works
  EXPECT_EQ(w->stats().written, 1u);
}

TEST_F(SnapshotWriterTest, HostileNamesStayInsideTheDirectory) {
  auto w = start(options());
  snap(*w, {{10, 10, 50, 50, 1, "../../escape"}}, "end", "../..");
  const auto files = jpegs();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], dir_ / ".._.." / "2026-12-01" / ".._.._escape-end.jpg");
  EXPECT_EQ(app::safe_component(""), "_");
  EXPECT_EQ(app::safe_component("."), "_.");
  EXPECT_EQ(app::safe_component(std::string(500, 'a')).size(), 128u);
  EXPECT_EQ(app::safe_component("door 1/ü"), "door_1___");
}

TEST_F(SnapshotWriterTest, OptionsOutsideTheirBoundsAreRefused) {
  for (auto change : std::vector<std::function<void(SnapshotOptions&)>>{
           [](SnapshotOptions& o) { o.quality = 0; }, [](SnapshotOptions& o) { o.quality = 101; },
           [](SnapshotOptions& o) { o.max_width = 10; }, [](SnapshotOptions& o) { o.max_width = 100000; },
           [](SnapshotOptions& o) { o.keep_per_second = 0; }, [](SnapshotOptions& o) { o.max_kept_frames = 0; },
           [](SnapshotOptions& o) { o.max_age_s = -1; }, [](SnapshotOptions& o) { o.dir.clear(); }}) {
    SnapshotOptions o = options();
    change(o);
    auto w = SnapshotWriter::start(o);
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.error().kind, ErrorKind::Input);
  }
  std::ofstream(dir_.string() + "-file") << "x";
  SnapshotOptions o = options();
  o.dir = dir_.string() + "-file";
  auto w = SnapshotWriter::start(o);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find(o.dir.string()), std::string::npos);
  fs::remove(o.dir);
}

// What on_frame costs the streaming thread when it keeps a copy of a 1080p frame (printed; the
// bound asserted is loose, for slow CI machines).
TEST_F(SnapshotWriterTest, KeepingA1080pCopyIsCheap) {
  SnapshotOptions o = options();
  o.keep_per_second = 100;
  auto w = start(o);
  GstVideoInfo info;
  GstBuffer* b = frame(1920, 1080, {{600, 300, 240, 300, 1, "a"}}, info);
  const int n = 20;
  const auto before = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    w->on_frame("door1", b, info);
    std::this_thread::sleep_for(11ms);
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before).count() / n - 11;
  gst_buffer_unref(b);
  std::printf("on_frame keeping a 1920x1080 I420 copy at 1280x720: %.2f ms\n", ms);
  EXPECT_EQ(w->stats().frames_kept, static_cast<std::uint64_t>(n));
  EXPECT_LT(ms, 100.0);
}

}  // namespace

// The per-track best-face machinery taconitepublish and taconiteidentify share (gst/common): the
// ranking, the crop that maps a frame only for an improved face, and the writer thread with its
// bounded queue, JPEG encoding and pluggable sink; hostile input included.
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <opencv2/imgcodecs.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "best_face_crop.hpp"
#include "best_faces.hpp"
#include "face_jpeg_writer.hpp"
#include "gst_test_support.hpp"
#include "roi_params.hpp"

namespace {

using namespace taconite::gst;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(BestFaceRankingTest, TheFirstFiniteFaceRanksThenOnlyAStrictlyBetterOne) {
  BestQuality best;
  EXPECT_FALSE(best.value());
  EXPECT_FALSE(best.beaten_by(kNaN));
  EXPECT_FALSE(best.beaten_by(kInf));
  EXPECT_FALSE(best.beaten_by(-kInf));
  EXPECT_TRUE(best.beaten_by(0.0)) << "a zero quality is a face, the first of its track";
  best.take(0.0);
  EXPECT_FALSE(best.beaten_by(0.0)) << "an equal face is not better";
  EXPECT_FALSE(best.beaten_by(-0.5));
  EXPECT_TRUE(best.beaten_by(0.4));
  best.take(0.4);
  EXPECT_FALSE(best.beaten_by(kNaN)) << "NaN never takes the place";
  EXPECT_FALSE(best.beaten_by(kInf)) << "nor an infinity, which nothing could beat";
  EXPECT_TRUE(best.beaten_by(0.41));
  ASSERT_TRUE(best.value());
  EXPECT_EQ(*best.value(), 0.4);
}

TEST(BestFaceRankingTest, ANegativeFirstQualityStillRanks) {
  BestQuality best;
  ASSERT_TRUE(best.beaten_by(-3.0));
  best.take(-3.0);
  EXPECT_TRUE(best.beaten_by(-2.0));
}

// A 5-point face inside a 40x40 box at (x, y).
void add_landmarks(GstVideoRegionOfInterestMeta* roi, double x, double y) {
  using taconite::vision::Point2;
  const std::array<Point2, 5> points = {Point2{x + 12, y + 15}, Point2{x + 28, y + 15}, Point2{x + 20, y + 22},
                                        Point2{x + 14, y + 30}, Point2{x + 26, y + 30}};
  ASSERT_TRUE(set_roi_points(roi, "landmarks", points));
}

// The error's message, empty for Ok: a search in it fails when the crop unexpectedly succeeded.
std::string message_of(const taconite::Status& status) { return status ? std::string() : status.error().message; }

class BestFaceCropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gst_init(nullptr, nullptr);
    gst_video_info_set_format(&info_, GST_VIDEO_FORMAT_RGB, kWidth, kHeight);
    frame_ = gsttest::rgb_buffer(kWidth, kHeight, [](int x, int y) {
      return std::array<std::uint8_t, 3>{static_cast<std::uint8_t>(x), static_cast<std::uint8_t>(y), 90};
    });
    with_landmarks_ = gst_buffer_add_video_region_of_interest_meta(frame_, "face", 10, 20, 40, 40);
    add_landmarks(with_landmarks_, 10, 20);
    without_landmarks_ = gst_buffer_add_video_region_of_interest_meta(frame_, "face", 100, 20, 40, 40);
  }
  void TearDown() override { gst_buffer_unref(frame_); }

  // The frame's pixels in a buffer too small for its caps: mapping it fails.
  GstBuffer* truncated_frame() const {
    return gst_buffer_copy_region(frame_, GST_BUFFER_COPY_ALL, 0, gst_buffer_get_size(frame_) / 2);
  }

  static constexpr int kWidth = 320, kHeight = 240;
  GstVideoInfo info_;
  GstBuffer* frame_ = nullptr;
  GstVideoRegionOfInterestMeta* with_landmarks_ = nullptr;
  GstVideoRegionOfInterestMeta* without_landmarks_ = nullptr;
  std::vector<cv::Mat> crops_;
  std::vector<std::int64_t> cropped_tracks_;
  TakeCrop take_ = [this](const ImprovedFace& face, cv::Mat rgb) {
    cropped_tracks_.push_back(face.track);
    crops_.push_back(std::move(rgb));
  };
};

TEST_F(BestFaceCropTest, ALandmarkedFaceGivesAnAligned112RgbCropAndOneWithoutLandmarksNone) {
  const std::vector<ImprovedFace> faces = {{1, with_landmarks_, 0.5}, {2, without_landmarks_, 0.9}};
  std::vector<std::int64_t> asked;
  const taconite::Status cropped = crop_improved_faces(
      frame_, &info_, faces, [&](const ImprovedFace& f) { asked.push_back(f.track); return true; }, take_);
  EXPECT_TRUE(cropped) << cropped.error().message;
  EXPECT_EQ(asked, (std::vector<std::int64_t>{1, 2})) << "each improved face asked, in order";
  ASSERT_EQ(cropped_tracks_, (std::vector<std::int64_t>{1})) << "no landmarks: no picture";
  const cv::Mat& crop = crops_[0];
  EXPECT_EQ(crop.cols, kBestFaceSize);
  EXPECT_EQ(crop.rows, kBestFaceSize);
  EXPECT_EQ(crop.type(), CV_8UC3);
  EXPECT_GT(cv::norm(crop), 0.0) << "the frame's pattern, not black";
}

TEST_F(BestFaceCropTest, TheFrameIsMappedOnlyWhenAFaceImprovedAndIsWanted) {
  GstBuffer* broken = truncated_frame();  // any attempt to map it fails
  const taconite::Status none_improved =
      crop_improved_faces(broken, &info_, {}, [](const ImprovedFace&) { return true; }, take_);
  EXPECT_TRUE(none_improved) << "no improved face: the frame is not mapped";
  const std::vector<ImprovedFace> faces = {{1, with_landmarks_, 0.5}, {2, with_landmarks_, 0.6}};
  int asked = 0;
  const taconite::Status none_wanted = crop_improved_faces(
      broken, &info_, faces, [&](const ImprovedFace&) { ++asked; return false; }, take_);
  EXPECT_TRUE(none_wanted) << "no face wanted (a full queue): the frame is not mapped";
  EXPECT_EQ(asked, 2);
  const taconite::Status wanted = crop_improved_faces(broken, &info_, faces, [](const ImprovedFace&) { return true; }, take_);
  EXPECT_FALSE(wanted);
  EXPECT_TRUE(!wanted && wanted.error().kind == taconite::ErrorKind::Input) << "a frame that is not what its caps say";
  EXPECT_NE(message_of(wanted).find("bytes"), std::string::npos) << message_of(wanted);
  EXPECT_TRUE(crops_.empty());
  gst_buffer_unref(broken);
}

TEST_F(BestFaceCropTest, AFrameThatCannotBeReadCropsNothingAndSaysWhy) {
  const std::vector<ImprovedFace> faces = {{1, with_landmarks_, 0.5}};
  const taconite::Status no_caps =
      crop_improved_faces(frame_, nullptr, faces, [](const ImprovedFace&) { return true; }, take_);
  EXPECT_FALSE(no_caps);
  EXPECT_NE(message_of(no_caps).find("caps"), std::string::npos) << message_of(no_caps);

  GstVideoInfo unreadable;  // a format the face front end does not read, in a buffer big enough for it
  gst_video_info_set_format(&unreadable, GST_VIDEO_FORMAT_UYVY, kWidth, kHeight);
  GstBuffer* uyvy = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&unreadable), nullptr);
  gst_buffer_memset(uyvy, 0, 128, GST_VIDEO_INFO_SIZE(&unreadable));
  const taconite::Status unread =
      crop_improved_faces(uyvy, &unreadable, faces, [](const ImprovedFace&) { return true; }, take_);
  EXPECT_FALSE(unread);
  EXPECT_NE(message_of(unread).find("UYVY"), std::string::npos) << message_of(unread);
  EXPECT_TRUE(crops_.empty());
  gst_buffer_unref(uyvy);
}

// A sink that records what it gets, can hold the writer thread at a gate, fail or throw.
struct Face {
  int id = 0;
};

class RecordingSink : public FaceSink<Face> {
 public:
  std::string store(Face& face, std::vector<unsigned char> jpeg) override {
    std::unique_lock<std::mutex> guard(lock_);
    entered_ = true;
    changed_.notify_all();
    changed_.wait(guard, [&] { return open_; });
    if (throws_) throw std::runtime_error("disk on fire");
    if (!failure_.empty()) return failure_;
    stored_.push_back(face.id);
    jpegs_.push_back(std::move(jpeg));
    return {};
  }
  std::string exception_problem(const std::string& what) const override { return "threw: " + what; }
  std::string failing_message(const std::string& problem) const override { return "failing: " + problem; }
  std::string recovered_message(std::uint64_t dropped) const override {
    return "recovered, " + std::to_string(dropped) + " dropped";
  }
  void failed() noexcept override { ++failed_calls_; }

  void hold() { set([&] { open_ = false; }); }
  void release() { set([&] { open_ = true; }); }
  void fail_with(std::string failure) { set([&] { failure_ = std::move(failure); }); }
  void throw_next(bool on) { set([&] { throws_ = on; }); }
  // Waits until the thread is in store() (the face it holds left the queue).
  bool wait_entered() {
    std::unique_lock<std::mutex> guard(lock_);
    return changed_.wait_for(guard, std::chrono::seconds(30), [&] { return entered_; });
  }
  std::vector<int> stored() {
    std::lock_guard<std::mutex> guard(lock_);
    return stored_;
  }
  std::vector<std::vector<unsigned char>> jpegs() {
    std::lock_guard<std::mutex> guard(lock_);
    return jpegs_;
  }
  int failed_calls() const { return failed_calls_; }

 private:
  template <typename Change>
  void set(Change change) {
    {
      std::lock_guard<std::mutex> guard(lock_);
      change();
    }
    changed_.notify_all();
  }
  std::mutex lock_;
  std::condition_variable changed_;
  bool open_ = true, entered_ = false, throws_ = false;
  std::string failure_;
  std::vector<int> stored_;
  std::vector<std::vector<unsigned char>> jpegs_;
  std::atomic<int> failed_calls_{0};
};

struct Reports {
  std::mutex lock;
  std::vector<std::pair<bool, std::string>> seen;
  FaceJpegWriter<Face>::Report report() {
    return [this](bool warning, const std::string& message) {
      std::lock_guard<std::mutex> guard(lock);
      seen.emplace_back(warning, message);
    };
  }
};

cv::Mat noise_face() {
  cv::Mat rgb(kBestFaceSize, kBestFaceSize, CV_8UC3);
  cv::randu(rgb, 0, 255);
  return rgb;
}

TEST(BestFaceWriterThreadTest, AFullQueueRefusesAndCountsAndTheRestIsStored) {
  RecordingSink sink;
  auto counters = std::make_shared<FaceWriterCounters>();
  {
    FaceJpegWriter<Face> writer(sink, 2, 90, counters, nullptr);
    sink.hold();
    ASSERT_TRUE(writer.submit(Face{1}, noise_face()));
    ASSERT_TRUE(sink.wait_entered());  // face 1 is at the sink: the queue is empty again
    EXPECT_TRUE(writer.submit(Face{2}, noise_face()));
    EXPECT_TRUE(writer.submit(Face{3}, noise_face()));
    EXPECT_TRUE(writer.full());
    EXPECT_FALSE(writer.submit(Face{4}, noise_face())) << "a third face waiting does not fit a queue of 2";
    writer.refused();  // a face the caller did not even crop
    EXPECT_EQ(counters->dropped, 2u);
    sink.release();
    writer.drain(30000);
    EXPECT_EQ(sink.stored(), (std::vector<int>{1, 2, 3})) << "in the order submitted";
    EXPECT_EQ(counters->stored, 3u);
  }
  EXPECT_EQ(counters->dropped, 2u) << "nothing was queued at the end";
}

TEST(BestFaceWriterThreadTest, FacesStillQueuedAtTheEndAreCountedDropped) {
  RecordingSink sink;
  auto counters = std::make_shared<FaceWriterCounters>();
  std::thread opener;
  {
    FaceJpegWriter<Face> writer(sink, 4, 90, counters, nullptr);
    sink.hold();
    ASSERT_TRUE(writer.submit(Face{1}, noise_face()));
    ASSERT_TRUE(sink.wait_entered());
    ASSERT_TRUE(writer.submit(Face{2}, noise_face()));
    ASSERT_TRUE(writer.submit(Face{3}, noise_face()));
    opener = std::thread([&] {  // lets face 1 go once the writer is being destroyed
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      sink.release();
    });
  }  // waits for face 1, drops 2 and 3
  opener.join();
  EXPECT_EQ(sink.stored(), (std::vector<int>{1}));
  EXPECT_EQ(counters->stored, 1u);
  EXPECT_EQ(counters->dropped, 2u);
}

TEST(BestFaceWriterThreadTest, TheSinkGetsADecodableJpegAndAnEmptyOneForNoPicture) {
  RecordingSink sink;
  auto counters = std::make_shared<FaceWriterCounters>();
  FaceJpegWriter<Face> writer(sink, 4, 90, counters, nullptr);
  ASSERT_TRUE(writer.submit(Face{1}, noise_face()));
  ASSERT_TRUE(writer.submit(Face{2}, cv::Mat()));
  writer.drain(30000);
  const std::vector<std::vector<unsigned char>> jpegs = sink.jpegs();
  ASSERT_EQ(jpegs.size(), 2u);
  const cv::Mat decoded = cv::imdecode(jpegs[0], cv::IMREAD_COLOR);
  EXPECT_EQ(decoded.cols, kBestFaceSize);
  EXPECT_EQ(decoded.rows, kBestFaceSize);
  EXPECT_TRUE(jpegs[1].empty()) << "no crop: no picture, the face still goes to the sink";
  EXPECT_EQ(counters->stored, 2u);
}

TEST(BestFaceWriterThreadTest, AFailingSinkIsReportedOnceAndItsRecoveryWithTheCountDropped) {
  RecordingSink sink;
  Reports reports;
  auto counters = std::make_shared<FaceWriterCounters>();
  FaceJpegWriter<Face> writer(sink, 8, 90, counters, reports.report());
  sink.fail_with("no room");
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(writer.submit(Face{i}, noise_face()));
  writer.drain(30000);
  sink.throw_next(true);
  sink.fail_with("");
  ASSERT_TRUE(writer.submit(Face{3}, noise_face()));
  writer.drain(30000);
  sink.throw_next(false);
  ASSERT_TRUE(writer.submit(Face{4}, noise_face()));
  writer.drain(30000);
  EXPECT_EQ(counters->dropped, 4u);
  EXPECT_EQ(counters->stored, 1u);
  EXPECT_EQ(sink.failed_calls(), 4);
  std::lock_guard<std::mutex> guard(reports.lock);
  ASSERT_EQ(reports.seen.size(), 2u) << "one warning for four failures, one info at the recovery";
  EXPECT_TRUE(reports.seen[0].first);
  EXPECT_EQ(reports.seen[0].second, "failing: no room");
  EXPECT_FALSE(reports.seen[1].first);
  EXPECT_EQ(reports.seen[1].second, "recovered, 4 dropped");
}

TEST(BestFaceWriterThreadTest, AThrowingSinkOrReportNeverEndsTheThread) {
  RecordingSink sink;
  auto counters = std::make_shared<FaceWriterCounters>();
  FaceJpegWriter<Face> writer(sink, 8, 90, counters,
                              [](bool, const std::string&) { throw std::runtime_error("report broke"); });
  sink.throw_next(true);
  ASSERT_TRUE(writer.submit(Face{1}, noise_face()));
  writer.drain(30000);
  sink.throw_next(false);
  ASSERT_TRUE(writer.submit(Face{2}, noise_face()));
  writer.drain(30000);
  EXPECT_EQ(sink.stored(), (std::vector<int>{2}));
  EXPECT_EQ(counters->dropped, 1u);
}

TEST(BestFaceWriterThreadTest, ACropOfAnotherTypeIsAProblemNotACrash) {
  RecordingSink sink;
  Reports reports;
  auto counters = std::make_shared<FaceWriterCounters>();
  FaceJpegWriter<Face> writer(sink, 8, 90, counters, reports.report());
  ASSERT_TRUE(writer.submit(Face{1}, cv::Mat(4, 4, CV_32FC2, cv::Scalar(1.0))));  // not an RGB picture
  writer.drain(30000);
  EXPECT_EQ(counters->dropped, 1u);
  std::lock_guard<std::mutex> guard(reports.lock);
  ASSERT_EQ(reports.seen.size(), 1u);
  EXPECT_EQ(reports.seen[0].second.rfind("failing: threw: ", 0), 0u) << reports.seen[0].second;
}

}  // namespace

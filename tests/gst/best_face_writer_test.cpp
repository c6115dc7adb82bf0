// taconitepublish's best-face writer on its own: a bounded queue whose overflow is dropped and
// counted, write failures counted, nothing lost without a count.
#include <glib/gstdio.h>
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <string>

#include "best_face_writer.hpp"

namespace {

using taconite::gst::BestFaceOutput;
using taconite::gst::BestFaceWriter;
using taconite::gst::BestFaceWriterSettings;

class BestFaceWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gchar* dir = g_dir_make_tmp("taconite-best-faces-XXXXXX", nullptr);
    ASSERT_NE(dir, nullptr);
    dir_ = dir;
    g_free(dir);
  }
  void TearDown() override {
    if (GDir* d = g_dir_open(dir_.c_str(), 0, nullptr)) {
      while (const gchar* name = g_dir_read_name(d)) g_remove((dir_ + "/" + name).c_str());
      g_dir_close(d);
    }
    g_rmdir(dir_.c_str());
  }
  static cv::Mat face() {
    cv::Mat rgb(112, 112, CV_8UC3);
    cv::randu(rgb, 0, 255);  // noise: the slowest image to encode
    return rgb;
  }
  std::string dir_;
};

TEST_F(BestFaceWriterTest, AFullQueueDropsAndCountsEveryFaceItCannotHold) {
  BestFaceWriterSettings settings;
  settings.dir = dir_;
  settings.stream = "cam";
  settings.max_queued = 1;
  taconite::Result<std::unique_ptr<BestFaceWriter>> started = BestFaceWriter::start(settings);
  ASSERT_TRUE(started) << started.error().message;
  std::unique_ptr<BestFaceWriter> writer = std::move(started.value());
  constexpr int kFaces = 200;
  int refused = 0;
  for (int i = 0; i < kFaces; ++i) refused += !writer->submit(i, "uid-" + std::to_string(i), 0.5, face());
  writer->drain(60000);
  const std::size_t finished = writer->take_finished().size();
  EXPECT_GT(refused, 0) << "200 faces into a queue of 1 faster than JPEG encoding";
  EXPECT_EQ(writer->dropped(), static_cast<std::uint64_t>(refused));
  EXPECT_EQ(finished + writer->dropped(), static_cast<std::size_t>(kFaces)) << "each face written or counted";
}

TEST_F(BestFaceWriterTest, AFileThatCannotBeWrittenIsCountedDropped) {
  BestFaceWriterSettings settings;
  settings.dir = dir_;
  settings.stream = "cam";
  taconite::Result<std::unique_ptr<BestFaceWriter>> started = BestFaceWriter::start(settings);
  ASSERT_TRUE(started) << started.error().message;
  std::unique_ptr<BestFaceWriter> writer = std::move(started.value());
  ASSERT_EQ(g_rmdir(dir_.c_str()), 0);  // the directory went away after the start
  ASSERT_TRUE(writer->submit(1, "uid-1", 0.5, face()));
  writer->drain(60000);
  EXPECT_TRUE(writer->take_finished().empty());
  EXPECT_EQ(writer->dropped(), 1u);
}

TEST_F(BestFaceWriterTest, NoDirectoryIsAnInputErrorAndOneThatCannotBeMadeAnIoError) {
  BestFaceWriterSettings settings;
  settings.stream = "cam";
  taconite::Result<std::unique_ptr<BestFaceWriter>> unset = BestFaceWriter::start(settings);
  ASSERT_FALSE(unset);
  EXPECT_EQ(unset.error().kind, taconite::ErrorKind::Input);
  EXPECT_EQ(unset.error().message, "best-face=path needs a directory: set best-face-dir");

  const std::string file = dir_ + "/a-file";  // a directory below a regular file cannot be made, even as root
  ASSERT_TRUE(g_file_set_contents(file.c_str(), "x", 1, nullptr));
  settings.dir = file + "/faces";
  taconite::Result<std::unique_ptr<BestFaceWriter>> unwritable = BestFaceWriter::start(settings);
  ASSERT_FALSE(unwritable);
  EXPECT_EQ(unwritable.error().kind, taconite::ErrorKind::Io);
  EXPECT_NE(unwritable.error().message.find("best-face-dir '" + settings.dir + "'"), std::string::npos)
      << unwritable.error().message;

  settings.output = BestFaceOutput::Base64;  // no directory needed
  taconite::Result<std::unique_ptr<BestFaceWriter>> inline_faces = BestFaceWriter::start(settings);
  EXPECT_TRUE(inline_faces) << inline_faces.error().message;
}

}  // namespace

// YuNetDetector with the real model from ../shared/models (skipped, saying why, where it is absent):
// a face found where it is on Debian's astronaut photo, and every kind of wrong model refused by
// name.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "yunet_detector.hpp"

namespace {

namespace fs = std::filesystem;
using taconite::vision::DetectedFace;
using taconite::vision::YuNetDetector;
using taconite::vision::YuNetOptions;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string model_path() { return env("TACONITE_YUNET_MODEL"); }

#define REQUIRE_MODEL()                                                                          \
  if (!fs::is_regular_file(model_path()))                                                         \
  GTEST_SKIP() << "the YuNet model is not at " << model_path()                                   \
               << " (download face_detection_yunet_2023mar.onnx from OpenCV Zoo into ../shared/models)"

std::string load_error(const std::string& path, const YuNetOptions& options = {}) {
  auto loaded = YuNetDetector::load(path, options);
  return loaded ? "" : loaded.error().message;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("taconite-yunet-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

TEST(YuNetModel, FindsTheAstronautsFaceAndItsLandmarks) {
  REQUIRE_MODEL();
  const cv::Mat photo_rgb = cv::imread(env("TACONITE_TEST_ASTRONAUT"), cv::IMREAD_COLOR);
  if (photo_rgb.empty()) GTEST_SKIP() << "python3-skimage's astronaut photo is not installed";
  auto loaded = YuNetDetector::load(model_path(), {});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  YuNetDetector& detector = *loaded.value();
  const std::vector<DetectedFace> faces = detector.detect(photo_rgb);  // imread gives BGR
  ASSERT_EQ(faces.size(), 1u);
  EXPECT_GT(faces[0].score, 0.8f);
  // The points OpenCV's own decoding gives at 640x640 (shared/models/README.md), in photo pixels.
  const cv::Point2f expected[5] = {{201, 105}, {245, 105}, {221, 127}, {204, 145}, {242, 145}};
  const float eye_distance = 44;
  for (int p = 0; p < 5; ++p) {
    EXPECT_LT(cv::norm(faces[0].landmarks[p] - expected[p]), 0.1f * eye_distance) << "landmark " << p;
    EXPECT_TRUE(faces[0].box.contains(faces[0].landmarks[p])) << "landmark " << p;
  }
}

TEST(YuNetModel, BoxesMapBackToFramesOfAnySize) {
  REQUIRE_MODEL();
  const cv::Mat photo = cv::imread(env("TACONITE_TEST_ASTRONAUT"), cv::IMREAD_COLOR);
  if (photo.empty()) GTEST_SKIP() << "python3-skimage's astronaut photo is not installed";
  auto detector = YuNetDetector::load(model_path(), {}).value();
  const std::vector<DetectedFace> at_full = detector->detect(photo);
  ASSERT_EQ(at_full.size(), 1u);
  // A frame smaller than the network input (scaled up) and a wide one (letterboxed): the same face
  // in each frame's own pixels.
  for (const double scale : {0.5, 2.5}) {
    cv::Mat scaled;
    cv::resize(photo, scaled, cv::Size(), scale, scale);
    cv::Mat wide(scaled.rows, scaled.cols * 2, CV_8UC3, cv::Scalar::all(0));
    scaled.copyTo(wide(cv::Rect(0, 0, scaled.cols, scaled.rows)));
    for (const cv::Mat& frame : {scaled, wide}) {
      const std::vector<DetectedFace> faces = detector->detect(frame);
      ASSERT_EQ(faces.size(), 1u) << "scale " << scale << " frame " << frame.cols << "x" << frame.rows;
      const cv::Rect2f expected(at_full[0].box.x * scale, at_full[0].box.y * scale, at_full[0].box.width * scale,
                                at_full[0].box.height * scale);
      const float iou = (faces[0].box & expected).area() / (faces[0].box | expected).area();
      EXPECT_GT(iou, 0.8f) << "scale " << scale << " frame " << frame.cols << "x" << frame.rows;
    }
  }
  EXPECT_TRUE(detector->detect(cv::Mat()).empty());
  EXPECT_TRUE(detector->detect(cv::Mat(10, 10, CV_8UC1, cv::Scalar(0))).empty());  // not BGR
}

TEST(YuNetModel, WrongFilesAreRefusedByName) {
  const std::string missing = scratch("missing.onnx");
  EXPECT_NE(load_error(missing).find(missing + ": does not exist"), std::string::npos) << load_error(missing);
  const fs::path text = scratch("notes.onnx");
  std::ofstream(text) << "this is not a network";
  const std::string error = load_error(text);
  EXPECT_NE(error.find(text.string()), std::string::npos) << error;
  EXPECT_NE(error.find("YuNet"), std::string::npos) << error;
  EXPECT_NE(load_error(text.parent_path()).find("is a directory"), std::string::npos);
  const fs::path fifo = scratch("fifo.onnx");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(load_error(fifo).find("is a FIFO"), std::string::npos);  // refused, not waited on
  EXPECT_NE(load_error("/dev/zero").find("is a device"), std::string::npos);
  YuNetOptions bad;
  bad.input_width = 33;
  EXPECT_NE(load_error(text, bad).find("multiple of 32"), std::string::npos);
}

TEST(YuNetModel, AnOnnxModelThatIsNotYuNetIsRefusedByItsOutputs) {
  const std::string wrong = env("TACONITE_WRONG_ONNX");
  if (wrong.empty()) GTEST_SKIP() << "python3-onnx is not installed: no wrong model was generated";
  const std::string error = load_error(wrong);
  EXPECT_NE(error.find("has no output 'cls_8'"), std::string::npos) << error;
}

TEST(YuNetModel, ATruncatedModelIsRefused) {
  REQUIRE_MODEL();
  std::ifstream in(model_path(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const fs::path half = scratch("half.onnx");
  std::ofstream(half, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  const std::string error = load_error(half);
  EXPECT_NE(error.find(half.string()), std::string::npos) << error;
}

}  // namespace

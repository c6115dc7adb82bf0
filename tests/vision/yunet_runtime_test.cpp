// YuNet on oneDNN against OpenCV DNN on real frames (../shared/realfaces: photos and the clip's
// frames; skipped, saying why, where absent): the raw outputs within a tight tolerance and the same
// faces decoded. And what oneDNN cannot run exactly is refused by node, with `auto` falling back.
#include <gtest/gtest.h>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/videoio.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/failure.hpp"
#include "onnx/onnx_graph.hpp"
#include "yunet_detector.hpp"

namespace {

namespace fs = std::filesystem;
using taconite::vision::DetectedFace;
using taconite::vision::YuNetDetector;
using taconite::vision::YuNetOptions;
using taconite::vision::YuNetRuntime;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}
std::string model_path() { return env("TACONITE_YUNET_MODEL"); }

std::string model_bytes() {
  std::ifstream in(model_path(), std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

#define REQUIRE_MODEL()                                                                          \
  if (!fs::is_regular_file(model_path()))                                                         \
  GTEST_SKIP() << "the YuNet model is not at " << model_path()                                   \
               << " (download face_detection_yunet_2023mar.onnx from OpenCV Zoo into ../shared/models)"

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("taconite-yunet-runtime-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

YuNetOptions with(YuNetRuntime runtime, int width = 640, int height = 384) {
  YuNetOptions options;
  options.runtime = runtime;
  options.input_width = width;
  options.input_height = height;
  return options;
}

// Photos (the first of each person) and frames of the clip, as BGR images.
std::vector<cv::Mat> real_frames() {
  const fs::path root = env("TACONITE_REALFACES_DIR");
  std::vector<cv::Mat> frames;
  std::vector<fs::path> people;
  if (fs::is_directory(root / "photos"))
    for (const auto& entry : fs::directory_iterator(root / "photos"))
      if (entry.is_directory()) people.push_back(entry.path());
  std::sort(people.begin(), people.end());
  for (const fs::path& person : people) {
    std::vector<fs::path> photos;
    for (const auto& entry : fs::directory_iterator(person)) photos.push_back(entry.path());
    std::sort(photos.begin(), photos.end());
    for (const fs::path& photo : photos)
      if (cv::Mat image = cv::imread(photo.string(), cv::IMREAD_COLOR); !image.empty()) {
        frames.push_back(image);
        break;
      }
    if (frames.size() == 6) break;
  }
  cv::VideoCapture clip((root / "video" / "short_hamilton_clip.mp4").string());
  cv::Mat frame;
  for (int index = 0; clip.isOpened() && clip.read(frame) && index < 200; ++index)
    if (index % 40 == 0) frames.push_back(frame.clone());
  return frames;
}

#define REQUIRE_ONEDNN(loaded)                                                                   \
  if (!(loaded) && (loaded).error().message.find("no oneDNN") != std::string::npos)               \
  GTEST_SKIP() << (loaded).error().message

TEST(YuNetRuntime, OnednnMatchesOpencvOnRealFrames) {
  REQUIRE_MODEL();
  const std::vector<cv::Mat> frames = real_frames();
  if (frames.size() < 4) GTEST_SKIP() << "../shared/realfaces is not at " << env("TACONITE_REALFACES_DIR");
  for (const auto& [width, height] : {std::pair{640, 384}, std::pair{320, 192}}) {
    auto opencv = YuNetDetector::load(model_path(), with(YuNetRuntime::Opencv, width, height));
    auto onednn = YuNetDetector::load(model_path(), with(YuNetRuntime::Onednn, width, height));
    REQUIRE_ONEDNN(onednn);
    ASSERT_TRUE(opencv.ok()) << opencv.error().message;
    ASSERT_TRUE(onednn.ok()) << onednn.error().message;
    EXPECT_EQ(opencv.value()->runtime(), YuNetRuntime::Opencv);
    EXPECT_EQ(onednn.value()->runtime(), YuNetRuntime::Onednn);
    std::size_t faces_seen = 0;
    float worst = 0;
    for (std::size_t f = 0; f < frames.size(); ++f) {
      const std::vector<DetectedFace> expected = opencv.value()->detect(frames[f]);
      const std::vector<DetectedFace> got = onednn.value()->detect(frames[f]);
      for (std::size_t o = 0; o < 12; ++o) {
        const std::span<const float> a = opencv.value()->raw_output(o), b = onednn.value()->raw_output(o);
        ASSERT_EQ(a.size(), b.size()) << "output " << o;
        ASSERT_FALSE(a.empty());
        for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
      }
      ASSERT_EQ(got.size(), expected.size()) << "frame " << f << " at " << width << "x" << height;
      faces_seen += got.size();
      for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i].score, expected[i].score, 1e-3f) << "frame " << f << " face " << i;
        const float scale = std::max(frames[f].cols / static_cast<float>(width), frames[f].rows / static_cast<float>(height));
        const float tolerance = 0.05f * scale;  // 0.05 network pixels, in frame pixels
        EXPECT_NEAR(got[i].box.x, expected[i].box.x, tolerance);
        EXPECT_NEAR(got[i].box.y, expected[i].box.y, tolerance);
        EXPECT_NEAR(got[i].box.width, expected[i].box.width, tolerance);
        EXPECT_NEAR(got[i].box.height, expected[i].box.height, tolerance);
        for (int p = 0; p < 5; ++p) {
          EXPECT_NEAR(got[i].landmarks[p].x, expected[i].landmarks[p].x, tolerance) << "landmark " << p;
          EXPECT_NEAR(got[i].landmarks[p].y, expected[i].landmarks[p].y, tolerance) << "landmark " << p;
        }
      }
    }
    EXPECT_LT(worst, 1e-3f) << "max abs difference of the raw outputs at " << width << "x" << height;
    EXPECT_GE(faces_seen, frames.size() / 2) << "the frames should hold faces";
    std::cout << width << "x" << height << ": " << frames.size() << " frames, " << faces_seen
              << " faces, raw outputs max abs diff " << worst << "\n";
  }
}

// The model with a byte string replaced by one of the same length (so the protobuf stays valid).
fs::path edited_model(const std::string& from, const std::string& to, const std::string& name) {
  std::string bytes = model_bytes();
  const std::size_t at = bytes.find(from);
  if (at == std::string::npos) return {};
  bytes.replace(at, from.size(), to);
  const fs::path path = scratch(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(YuNetRuntime, WhatOnednnCannotRunExactlyIsRefusedByNodeAndAutoFallsBack) {
  REQUIRE_MODEL();
  // A Resize whose coordinates oneDNN's nearest resampling would not reproduce exactly.
  const fs::path half_pixel = edited_model("asymmetric", "half_pixel", "half-pixel.onnx");
  // An operator it does not have (Softmax for the first Sigmoid: OpenCV still runs it): the op_type
  // field (number 4, length 7), not the node's name.
  const fs::path softmax = edited_model(std::string("\x22\x07Sigmoid"), std::string("\x22\x07Softmax"), "softmax.onnx");
  ASSERT_FALSE(half_pixel.empty());
  ASSERT_FALSE(softmax.empty());
  for (const auto& [path, node] : {std::pair{half_pixel, std::string("'Resize_43' (Resize)")},
                                   std::pair{softmax, std::string("'Sigmoid_85' (Softmax)")}}) {
    auto onednn = YuNetDetector::load(path, with(YuNetRuntime::Onednn));
    REQUIRE_ONEDNN(onednn);
    ASSERT_FALSE(onednn.ok()) << path;
    EXPECT_NE(onednn.error().message.find(path.string() + ": node " + node), std::string::npos) << onednn.error().message;
    auto fallback = YuNetDetector::load(path, with(YuNetRuntime::Auto));
    ASSERT_TRUE(fallback.ok()) << fallback.error().message;
    EXPECT_EQ(fallback.value()->runtime(), YuNetRuntime::Opencv);
    EXPECT_NE(fallback.value()->runtime_reason().find(node), std::string::npos) << fallback.value()->runtime_reason();
  }
  auto real = YuNetDetector::load(model_path(), with(YuNetRuntime::Auto));
  ASSERT_TRUE(real.ok()) << real.error().message;
  EXPECT_EQ(real.value()->runtime(), YuNetRuntime::Onednn) << real.value()->runtime_reason();
}

// Every prefix of the model (and bytes flipped in its weights' lengths) is refused with a message
// or read: never a crash, never an unbounded allocation.
TEST(YuNetRuntime, TruncatedAndCorruptedModelsAreRefused) {
  REQUIRE_MODEL();
  const std::string bytes = model_bytes();
  const auto as_span = [](const std::string& b) {
    return std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(b.data()), b.size());
  };
  std::size_t refused = 0;
  for (std::size_t size = 0; size < bytes.size(); size += 997) {
    try {
      taconite::onnx::read_onnx_graph(as_span(bytes.substr(0, size)), "prefix");
    } catch (const taconite::Failure& failure) {
      EXPECT_NE(failure.error().message.find("prefix: "), std::string::npos);
      ++refused;
    }
  }
  EXPECT_GT(refused, 0u);
  std::string corrupted = bytes;
  for (std::size_t at = 16; at < corrupted.size(); at += 4093) corrupted[at] = static_cast<char>(0xff);
  const fs::path path = scratch("corrupted.onnx");
  std::ofstream(path, std::ios::binary) << corrupted;
  auto loaded = YuNetDetector::load(path, with(YuNetRuntime::Onednn));
  REQUIRE_ONEDNN(loaded);
  if (!loaded) {
    EXPECT_NE(loaded.error().message.find(path.string()), std::string::npos) << loaded.error().message;
  }
}

}  // namespace

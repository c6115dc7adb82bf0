// The front end on plain image views, without GStreamer: every pixel format to RGB (byte order,
// padding, strides, regions outside the image), Y'CbCr by the view's matrix and range, the CHW
// input and the landmark model's file checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "face_landmarks.hpp"
#include "face_preprocess.hpp"
#include "image_view.hpp"
#include "rgb_conversion.hpp"
#include "similarity_alignment.hpp"

namespace {

using taconite::vision::ImageView;
using taconite::vision::PixelFormat;
using Rgb = std::array<std::uint8_t, 3>;
// A bundle's normalisation (cvlface: (x/255-0.5)/0.5), RGB.
constexpr taconite::vision::PixelNormalisation kCvlface{taconite::vision::ChannelOrder::Rgb, {0.5f, 0.5f, 0.5f},
                                                         {0.5f, 0.5f, 0.5f}};

// Three pixels in a row: red-ish, green-ish, blue-ish.
constexpr std::array<Rgb, 3> kPixels{{{200, 10, 20}, {30, 180, 40}, {50, 60, 170}}};

// kPixels packed as `format` lays them out, rows `stride` bytes apart (padding filled with 0xEE so
// a view that reads it shows), two identical rows.
std::vector<std::uint8_t> packed(PixelFormat format, int stride) {
  const int bytes = taconite::vision::plane0_bytes(format);
  const std::array<int, 3> offsets = taconite::vision::rgb_offsets(format);
  std::vector<std::uint8_t> memory(static_cast<std::size_t>(2 * stride), 0xEE);
  for (int row = 0; row < 2; ++row)
    for (int x = 0; x < 3; ++x) {
      std::uint8_t* pixel = memory.data() + row * stride + x * bytes;
      if (format == PixelFormat::Gray8) {
        pixel[0] = kPixels[x][0];
        continue;
      }
      for (int c = 0; c < 3; ++c) pixel[offsets[c]] = kPixels[x][c];
    }
  return memory;
}

ImageView view_of(PixelFormat format, const std::vector<std::uint8_t>& memory, int stride) {
  ImageView view;
  view.format = format;
  view.width = 3;
  view.height = 2;
  view.planes[0] = memory.data();
  view.strides[0] = stride;
  return view;
}

std::string format_name(const ::testing::TestParamInfo<PixelFormat>& info) {
  constexpr const char* kNames[] = {"RGB",  "BGR",  "RGBx", "BGRx", "xRGB", "xBGR",
                                    "RGBA", "BGRA", "I420", "NV12", "GRAY8"};
  return kNames[static_cast<int>(info.param)];
}

class PackedFormats : public ::testing::TestWithParam<PixelFormat> {};

TEST_P(PackedFormats, ConvertToRgbInTheirByteOrderHonouringTheStride) {
  const PixelFormat format = GetParam();
  const int stride = 3 * taconite::vision::plane0_bytes(format) + 5;  // padded rows
  const std::vector<std::uint8_t> memory = packed(format, stride);
  const cv::Mat rgb = taconite::vision::extract_rgb(view_of(format, memory, stride), cv::Rect(0, 0, 3, 2));
  ASSERT_EQ(rgb.type(), CV_8UC3);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) {
      const cv::Vec3b got = rgb.at<cv::Vec3b>(y, x);
      for (int c = 0; c < 3; ++c) {
        const std::uint8_t want = format == PixelFormat::Gray8 ? kPixels[x][0] : kPixels[x][c];
        EXPECT_EQ(got[c], want) << "pixel " << x << "," << y << " channel " << c;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Views, PackedFormats,
                         ::testing::Values(PixelFormat::Rgb, PixelFormat::Bgr, PixelFormat::Rgbx, PixelFormat::Bgrx,
                                           PixelFormat::Xrgb, PixelFormat::Xbgr, PixelFormat::Rgba, PixelFormat::Bgra,
                                           PixelFormat::Gray8),
                         format_name);

TEST(ImageViewRegion, OutsideTheImageIsBlack) {
  const std::vector<std::uint8_t> memory = packed(PixelFormat::Rgb, 9);
  const cv::Mat rgb = taconite::vision::extract_rgb(view_of(PixelFormat::Rgb, memory, 9), cv::Rect(-1, -1, 3, 3));
  EXPECT_EQ(rgb.at<cv::Vec3b>(0, 0), cv::Vec3b(0, 0, 0));
  EXPECT_EQ(rgb.at<cv::Vec3b>(0, 2), cv::Vec3b(0, 0, 0));
  EXPECT_EQ(rgb.at<cv::Vec3b>(1, 1), cv::Vec3b(200, 10, 20));  // the image's (0, 0)
  EXPECT_EQ(rgb.at<cv::Vec3b>(2, 2), cv::Vec3b(30, 180, 40));   // the image's (1, 1)
}

// A flat 4x4 4:2:0 image of one colour given as R'G'B', encoded with `kr`/`kb` and `full` range.
struct Yuv420 {
  std::vector<std::uint8_t> y, u, v, uv;
  ImageView view;

  Yuv420(PixelFormat format, Rgb rgb, double kr, double kb, bool full) {
    const double r = rgb[0], g = rgb[1], b = rgb[2];
    const double luma = kr * r + (1 - kr - kb) * g + kb * b;
    const double cb = (b - luma) / (2 * (1 - kb)), cr = (r - luma) / (2 * (1 - kr));
    const auto byte = [](double value) {
      return static_cast<std::uint8_t>(std::lround(std::clamp(value, 0.0, 255.0)));
    };
    const std::uint8_t Y = byte(full ? luma : 16 + luma * 219 / 255);
    const std::uint8_t U = byte(128 + cb * (full ? 1.0 : 224.0 / 255));
    const std::uint8_t V = byte(128 + cr * (full ? 1.0 : 224.0 / 255));
    y.assign(16, Y);
    u.assign(4, U);
    v.assign(4, V);
    uv = {U, V, U, V, U, V, U, V};
    view.format = format;
    view.width = view.height = 4;
    view.planes = {y.data(), format == PixelFormat::Nv12 ? uv.data() : u.data(), v.data()};
    view.strides = {4, format == PixelFormat::Nv12 ? 4 : 2, 2};
    view.colour = {kr, kb, full};
  }
};

TEST(ImageViewYuv, ConvertsByTheViewsMatrixAndRange) {
  const Rgb colour{200, 60, 30};
  for (const PixelFormat format : {PixelFormat::I420, PixelFormat::Nv12})
    for (const auto& [kr, kb] : {std::pair{0.299, 0.114}, std::pair{0.2126, 0.0722}})
      for (const bool full : {false, true}) {
        const Yuv420 image(format, colour, kr, kb, full);
        const cv::Mat rgb = taconite::vision::extract_rgb(image.view, cv::Rect(1, 1, 2, 2));
        for (int c = 0; c < 3; ++c)
          EXPECT_NEAR(rgb.at<cv::Vec3b>(1, 1)[c], colour[c], 3)
              << (format == PixelFormat::Nv12 ? "NV12" : "I420") << " Kr " << kr << (full ? " full" : " limited")
              << " channel " << c;
        const cv::Mat scaled = taconite::vision::scaled_frame_rgb(image.view, cv::Size(2, 2));
        for (int c = 0; c < 3; ++c) EXPECT_NEAR(scaled.at<cv::Vec3b>(0, 0)[c], colour[c], 3);
      }
}

// A 112x112 BGR picture of byte i = (i * step) % modulus, and its view.
struct Bgr112 {
  Bgr112(std::size_t step, std::size_t modulus) : memory(112 * 112 * 3) {
    for (std::size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<std::uint8_t>((i * step) % modulus);
    view.format = PixelFormat::Bgr;
    view.width = view.height = 112;
    view.planes[0] = memory.data();
    view.strides[0] = 112 * 3;
  }
  Bgr112(const Bgr112&) = delete;  // the view points into this object's memory
  Bgr112& operator=(const Bgr112&) = delete;
  std::vector<std::uint8_t> memory;
  ImageView view;
};

TEST(ImageViewChw, AnAlignedCropAndARegionGiveTheSameInputForTheIdentityFit) {
  // An image that is exactly the model input: the identity similarity warps it onto itself.
  const Bgr112 image(7, 251);
  const std::vector<std::uint8_t>& memory = image.memory;
  const ImageView& view = image.view;
  std::vector<float> aligned, cropped;
  taconite::vision::aligned_face_to_chw(view, cv::Matx23d(1, 0, 0, 0, 1, 0), 112, 112, kCvlface, aligned);
  taconite::vision::region_to_chw(view, {0, 0, 112, 112}, 112, 112, kCvlface, cropped);
  ASSERT_EQ(aligned.size(), 3u * 112 * 112);
  ASSERT_EQ(aligned, cropped);
  // Plane 0 is R, which BGR memory holds at byte 2.
  EXPECT_FLOAT_EQ(cropped[0], (memory[2] / 255.0f - 0.5f) / 0.5f);
}

TEST(ImageViewChw, TheAlignedRgbFaceIsThePictureTheModelInputIsMadeOf) {
  // BGR memory, the identity fit: the RGB picture holds the image's pixels with R first.
  const Bgr112 image(7, 251);
  const std::vector<std::uint8_t>& memory = image.memory;
  const ImageView& view = image.view;
  const cv::Matx23d identity(1, 0, 0, 0, 1, 0);
  const cv::Mat rgb = taconite::vision::aligned_face_rgb(view, identity, 112, 112);
  ASSERT_EQ(rgb.type(), CV_8UC3);
  ASSERT_EQ(rgb.size(), cv::Size(112, 112));
  for (int y : {0, 57, 111})
    for (int x : {0, 31, 111})
      for (int c = 0; c < 3; ++c)
        EXPECT_EQ(rgb.at<cv::Vec3b>(y, x)[c], memory[(y * 112 + x) * 3 + (2 - c)]) << x << "," << y << " " << c;
  std::vector<float> chw;
  taconite::vision::aligned_face_to_chw(view, identity, 112, 112, kCvlface, chw);
  EXPECT_FLOAT_EQ(chw[0], (rgb.at<cv::Vec3b>(0, 0)[0] / 255.0f - 0.5f) / 0.5f);
}

TEST(ImageViewChw, EachPlaneTakesTheModelsOrderMeanAndStd) {
  // An ONNX embedder's normalisation: BGR planes, ImageNet-like mean and std per plane.
  const Bgr112 image(11, 253);
  const std::vector<std::uint8_t>& memory = image.memory;
  const ImageView& view = image.view;
  const taconite::vision::PixelNormalisation bgr{taconite::vision::ChannelOrder::Bgr, {0.406f, 0.456f, 0.485f},
                                                 {0.225f, 0.224f, 0.229f}};
  std::vector<float> chw;
  taconite::vision::region_to_chw(view, {0, 0, 112, 112}, 112, 112, bgr, chw);
  ASSERT_EQ(chw.size(), 3u * 112 * 112);
  const std::size_t plane = 112 * 112;
  for (std::size_t pixel : {std::size_t{0}, std::size_t{5000}, plane - 1})
    for (std::size_t c = 0; c < 3; ++c)  // plane c of BGR is byte c of BGR memory
      EXPECT_FLOAT_EQ(chw[c * plane + pixel], (memory[pixel * 3 + c] / 255.0f - bgr.mean[c]) / bgr.std_dev[c])
          << "pixel " << pixel << " plane " << c;
}

TEST(LandmarkModelFile, AMissingFileOrADirectoryIsRefusedByName) {
  auto missing = taconite::vision::LandmarkModel::load("/nonexistent/model.dat");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, taconite::ErrorKind::Io);
  const std::string& problem = missing.error().message;
  EXPECT_NE(problem.find("/nonexistent/model.dat does not exist"), std::string::npos) << problem;
  const std::string directory = std::filesystem::temp_directory_path().string();
  auto not_a_file = taconite::vision::LandmarkModel::load(directory);
  ASSERT_FALSE(not_a_file.ok());
  const std::string& why = not_a_file.error().message;
  EXPECT_NE(why.find(directory + " is not a regular file"), std::string::npos) << why;
}

}  // namespace

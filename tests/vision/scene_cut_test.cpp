// The scene-cut detector on synthetic frames: a cut between two different scenes (or to the
// mirrored picture) fires once; camera noise, a pan of 8 px a frame, a zoom, a gradual brightness
// ramp and a person walking in front of a fixed camera never do; hostile sizes and strides are
// refused without losing the last frame.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "image_view.hpp"
#include "scene_cut.hpp"

namespace {

using taconite::vision::ImageView;
using taconite::vision::PixelFormat;
using taconite::vision::SceneCutDetector;
using taconite::vision::SceneCutResult;

// The default of taconitetrack's scene-cut-threshold.
constexpr double kThreshold = 0.15;
constexpr int kWidth = 320, kHeight = 180;

// A scene defined at every world point (so pans and zooms see one consistent world): smooth
// shading plus a few flat objects of random grey, as a natural picture has, chosen by `seed`.
class Scene {
 public:
  explicit Scene(unsigned seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    base_ = 40 + 150 * unit(random);
    for (double& p : phase_) p = 6.283 * unit(random);
    for (Object& o : objects_) {
      o = {800 * unit(random), 450 * unit(random), 40 + 160 * unit(random), 30 + 120 * unit(random),
           255 * unit(random)};
    }
  }
  double at(double x, double y) const {
    double v = base_ + 35 * std::sin(x / 41 + phase_[0]) * std::cos(y / 57 + phase_[1]) +
               20 * std::sin((x + 2 * y) / 23 + phase_[2]);
    for (const Object& o : objects_)
      if (x >= o.x && x < o.x + o.w && y >= o.y && y < o.y + o.h) v = 0.3 * v + 0.7 * o.grey;
    return v;
  }

 private:
  struct Object {
    double x, y, w, h, grey;
  };
  double base_ = 128;
  double phase_[3] = {};
  Object objects_[6] = {};
};

struct Frame {
  std::vector<std::uint8_t> pixels;
  ImageView view;
};

// A GRAY8 frame whose pixel (x, y) is `value(x, y)`, rows `stride` bytes apart (0: width).
template <typename Value>
Frame gray_frame(Value value, int width = kWidth, int height = kHeight, int stride = 0) {
  Frame f;
  stride = stride ? stride : width;
  f.pixels.assign(static_cast<std::size_t>(stride) * height, 0xEE);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      f.pixels[static_cast<std::size_t>(y) * stride + x] =
          static_cast<std::uint8_t>(std::clamp(std::lround(value(x, y)), 0L, 255L));
  f.view.format = PixelFormat::Gray8;
  f.view.width = width;
  f.view.height = height;
  f.view.planes[0] = f.pixels.data();
  f.view.strides[0] = stride;
  return f;
}

// The frames of a sequence, fed in order; returns the indices of the frames that were cuts and
// the highest score seen.
struct Sequence {
  std::vector<int> cuts;
  double highest = 0.0;
};
template <typename FrameAt>
Sequence run(int frames, FrameAt frame_at) {
  SceneCutDetector detector;
  Sequence out;
  for (int i = 0; i < frames; ++i) {
    const Frame f = frame_at(i);
    const SceneCutResult result = detector.update(f.view, kThreshold);
    EXPECT_EQ(result.problem, "") << "frame " << i;
    if (result.cut) out.cuts.push_back(i);
    out.highest = std::max(out.highest, result.score);
  }
  return out;
}

TEST(SceneCut, ACutBetweenTwoScenesFiresOnceOnTheFirstFrameOfTheNewOne) {
  for (unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
    const Scene before(seed), after(seed + 100);
    const Sequence r = run(20, [&](int i) {
      const Scene& scene = i < 10 ? before : after;
      return gray_frame([&](int x, int y) { return scene.at(x + 2 * i, y); });  // a slow pan on both sides
    });
    EXPECT_EQ(r.cuts, std::vector<int>{10}) << "seed " << seed;
  }
}

TEST(SceneCut, ACutToTheSamePictureMirroredFiresThoughItsHistogramIsTheSame) {
  // A reverse shot with the frame's histogram unchanged: only where the greys are has changed.
  const Scene scene(6);
  const Sequence r = run(12, [&](int i) {
    return gray_frame([&](int x, int y) { return scene.at(i < 6 ? x : kWidth - 1 - x, y); });
  });
  EXPECT_EQ(r.cuts, std::vector<int>{6});
}

TEST(SceneCut, CameraNoiseIsNoCut) {
  const Scene scene(7);
  std::mt19937 random(11);
  std::normal_distribution<double> noise(0.0, 10.0);
  const Sequence r = run(30, [&](int) { return gray_frame([&](int x, int y) { return scene.at(x, y) + noise(random); }); });
  EXPECT_TRUE(r.cuts.empty()) << "first at frame " << r.cuts.front();
  EXPECT_LT(r.highest, kThreshold / 2) << "noise of sigma 10 stays well below the threshold";
}

TEST(SceneCut, APanOfEightPixelsAFrameIsNoCut) {
  for (unsigned seed : {7u, 8u, 9u}) {
    const Scene scene(seed);
    const Sequence r = run(50, [&](int i) { return gray_frame([&](int x, int y) { return scene.at(x + 8 * i, y + i); }); });
    EXPECT_TRUE(r.cuts.empty()) << "seed " << seed << ": first at frame " << r.cuts.front();
  }
}

TEST(SceneCut, AZoomIsNoCut) {
  const Scene scene(12);
  // Zooming in 3 % a frame towards the frame's centre, to 4x over 48 frames.
  const Sequence r = run(48, [&](int i) {
    const double scale = std::pow(1.03, -i);
    return gray_frame(
        [&](int x, int y) { return scene.at(400 + (x - kWidth / 2) * scale, 225 + (y - kHeight / 2) * scale); });
  });
  EXPECT_TRUE(r.cuts.empty()) << "first at frame " << r.cuts.front();
}

TEST(SceneCut, AGradualBrightnessRampIsNoCut) {
  const Scene scene(13);
  // A light switched on over two seconds at 30 fps: from a fifth of the brightness to all of it.
  const Sequence r = run(60, [&](int i) {
    const double gain = 0.2 + 0.8 * i / 59.0;
    return gray_frame([&](int x, int y) { return gain * scene.at(x, y); });
  });
  EXPECT_TRUE(r.cuts.empty()) << "first at frame " << r.cuts.front();
}

TEST(SceneCut, SomeoneWalkingInFrontOfAFixedCameraIsNoCut) {
  const Scene room(14);
  // A person a third of the frame high and a sixth wide, crossing at 12 px a frame.
  const Sequence r = run(30, [&](int i) {
    return gray_frame([&](int x, int y) {
      const int left = -60 + 12 * i;
      const bool person = x >= left && x < left + kWidth / 6 && y >= kHeight / 3;
      return person ? (y < kHeight / 2 ? 200.0 : 30.0) : room.at(x, y);
    });
  });
  EXPECT_TRUE(r.cuts.empty()) << "first at frame " << r.cuts.front();
}

TEST(SceneCut, PackedRgbWithPaddedRowsIsReadAsLuma) {
  // The same two scenes as BGRx with 12 padding bytes a row: the cut fires, the pan does not.
  const Scene before(21), after(121);
  auto bgrx = [](const Scene& scene, int shift) {
    Frame f;
    const int stride = kWidth * 4 + 12;
    f.pixels.assign(static_cast<std::size_t>(stride) * kHeight, 0xEE);
    for (int y = 0; y < kHeight; ++y)
      for (int x = 0; x < kWidth; ++x) {
        const auto v = static_cast<std::uint8_t>(std::clamp(std::lround(scene.at(x + shift, y)), 0L, 255L));
        std::uint8_t* p = f.pixels.data() + static_cast<std::size_t>(y) * stride + 4 * x;
        p[0] = v / 2, p[1] = v, p[2] = static_cast<std::uint8_t>(255 - v / 2), p[3] = 0;  // B, G, R, x
      }
    f.view.format = PixelFormat::Bgrx;
    f.view.width = kWidth;
    f.view.height = kHeight;
    f.view.planes[0] = f.pixels.data();
    f.view.strides[0] = stride;
    return f;
  };
  const Sequence r = run(12, [&](int i) { return bgrx(i < 6 ? before : after, 8 * i); });
  EXPECT_EQ(r.cuts, std::vector<int>{6});
}

TEST(SceneCut, ThresholdZeroNeverCutsAndAFirstFrameIsNoCut) {
  const Frame a = gray_frame([](int, int) { return 10.0; });
  const Frame b = gray_frame([](int x, int) { return x % 64 < 32 ? 250.0 : 0.0; });
  SceneCutDetector detector;
  EXPECT_FALSE(detector.update(b.view, kThreshold).cut) << "nothing to compare the first frame with";
  const SceneCutResult off = detector.update(a.view, 0.0);
  EXPECT_FALSE(off.cut);
  EXPECT_GT(off.score, kThreshold) << "a flat frame after a striped one: scored, not cut";
  EXPECT_TRUE(detector.update(b.view, kThreshold).cut);
  detector.reset();
  EXPECT_FALSE(detector.update(a.view, kThreshold).cut) << "reset: a first frame again";
}

TEST(SceneCut, AFrameOfAnotherSizeStartsAfresh) {
  const Scene one(31), two(131);
  SceneCutDetector detector;
  EXPECT_FALSE(detector.update(gray_frame([&](int x, int y) { return one.at(x, y); }).view, kThreshold).cut);
  const SceneCutResult resized =
      detector.update(gray_frame([&](int x, int y) { return two.at(x, y); }, 160, 90).view, kThreshold);
  EXPECT_FALSE(resized.cut);
  EXPECT_EQ(resized.score, 0.0);
}

TEST(SceneCut, HostileSizesAndStridesAreRefusedAndTheLastFrameIsKept) {
  const Scene before(41), after(141);
  const Frame first = gray_frame([&](int x, int y) { return before.at(x, y); });
  const Frame second = gray_frame([&](int x, int y) { return after.at(x, y); });
  SceneCutDetector detector;
  ASSERT_EQ(detector.update(first.view, kThreshold).problem, "");
  const auto refused = [&](ImageView view, const char* what) {
    const SceneCutResult result = detector.update(view, kThreshold);
    EXPECT_NE(result.problem.find(what), std::string::npos) << result.problem;
    EXPECT_FALSE(result.cut);
  };
  ImageView v = second.view;
  v.width = 0;
  refused(v, "frame size 0x180");
  v = second.view;
  v.height = -5;
  refused(v, "frame size 320x-5");
  v = second.view;
  v.width = SceneCutDetector::kMaxSide + 1;
  v.strides[0] = v.width;  // as if the memory were there: the size alone is refused
  refused(v, "outside 1..65536");
  v = second.view;
  v.strides[0] = kWidth - 1;
  refused(v, "stride 319 is below its row of 320 bytes");
  v = second.view;
  v.strides[0] = -kWidth;
  refused(v, "stride -320");
  v = second.view;
  v.format = PixelFormat::Rgbx;  // 4 bytes a pixel: the GRAY8 stride is a quarter of a row
  refused(v, "below its row of 1280 bytes");
  v = second.view;
  v.planes[0] = nullptr;
  refused(v, "no plane 0");
  // None of them replaced the first frame: the second is compared with it, and is a cut.
  EXPECT_TRUE(detector.update(second.view, kThreshold).cut);
}

}  // namespace

// Every accepted caps format (packed and strided) reaches the engine as the same RGB face, and
// channel-order decides which plane comes first.
#include <cmath>

#include "gst_test_support.hpp"

namespace {

using namespace gsttest;

// A smooth colourful pattern, so 4:2:0 chroma subsampling loses little.
std::array<std::uint8_t, 3> pattern(int x, int y) {
  return {static_cast<std::uint8_t>(40 + x), static_cast<std::uint8_t>(200 - y), static_cast<std::uint8_t>(60 + (x + y) / 2)};
}

struct FormatCase {
  const char* format;
  bool yuv;
};

// gtest would otherwise print the struct's bytes, padding included.
void PrintTo(const FormatCase& c, std::ostream* os) { *os << c.format; }

class FormatTest : public ::testing::TestWithParam<std::tuple<FormatCase, bool>> {
 protected:
  void SetUp() override { engine = install_fake_engine(); }
  void TearDown() override { uninstall_fake_engine(); }
  std::shared_ptr<FakeEngineState> engine;
};

struct Diff {
  double mean = 0, max = 0;
};

Diff compare(const std::vector<float>& got, const std::vector<float>& want) {
  Diff d;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = std::fabs(static_cast<double>(got[i]) - want[i]);
    d.mean += e;
    d.max = std::max(d.max, e);
  }
  d.mean /= static_cast<double>(got.size());
  return d;
}

// `rgb` converted by videoconvert to `format` (which may carry more caps fields, e.g.
// "I420,colorimetry=bt709"), rows padded by `row_padding` bytes when `strided`. Takes `rgb`.
GstBuffer* frame_in(GstBuffer* rgb, const std::string& format, int width, int height, bool strided, int row_padding) {
  GstBuffer* converted = convert_rgb(rgb, width, height, format.c_str());
  gst_buffer_unref(rgb);
  if (converted == nullptr || !strided) return converted;
  GstBuffer* padded = restride(converted, format.c_str(), width, height, row_padding);
  gst_buffer_unref(converted);
  return padded;
}

// Pushes one frame of `format` through the element (fake engine) and returns what came out.
GstBuffer* through_element(GstBuffer* frame, const std::string& format, int width, int height,
                           const char* input_mode = "crops") {
  GstHarness* h = adaface_harness({{"bundle", "fake"}, {"input-mode", input_mode}});
  gchar* caps = g_strdup_printf("video/x-raw,format=%s,width=%d,height=%d,framerate=30/1", format.c_str(), width, height);
  gst_harness_set_src_caps_str(h, caps);
  g_free(caps);
  GstBuffer* out = gst_harness_push_and_pull(h, frame);
  gst_harness_teardown(h);
  return out;
}

TEST_P(FormatTest, FaceReachesTheEngineAsRgb) {
  const auto [fc, strided] = GetParam();
  GstBuffer* input = frame_in(rgb_buffer(112, 112, pattern), fc.format, 112, 112, strided, 24);
  ASSERT_NE(input, nullptr) << "videoconvert to " << fc.format;
  if (strided) {
    ASSERT_NE(gst_buffer_get_video_meta(input), nullptr);
  }
  GstBuffer* out = through_element(input, fc.format, 112, 112);
  ASSERT_NE(out, nullptr);
  EXPECT_NE(gst_buffer_get_taconite_embedding_meta(out), nullptr);
  gst_buffer_unref(out);

  ASSERT_EQ(engine->faces_seen(), 1u);
  const Diff d = compare(engine->inputs[0], expected_chw(112, 112, pattern));
  if (fc.yuv) {
    // RGB -> YUV 4:2:0 (videoconvert) -> RGB (OpenCV, BT.601): a few levels of rounding.
    EXPECT_LT(d.mean, 0.03) << fc.format;
    EXPECT_LT(d.max, 0.15) << fc.format;
  } else {
    EXPECT_EQ(d.max, 0.0) << fc.format << ": packed RGB formats are exact";
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, FormatTest,
                         ::testing::Combine(::testing::Values(FormatCase{"RGB", false}, FormatCase{"BGR", false},
                                                              FormatCase{"RGBx", false}, FormatCase{"BGRx", false},
                                                              FormatCase{"xRGB", false}, FormatCase{"xBGR", false},
                                                              FormatCase{"RGBA", false}, FormatCase{"BGRA", false},
                                                              FormatCase{"I420", true}, FormatCase{"NV12", true}),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).format) +
                                  (std::get<1>(info.param) ? "_strided" : "_packed");
                         });

// 4:2:0 caps say how to get RGB back: BT.709 (HD cameras; GStreamer's default above SD sizes) and
// full range must come back as the same face as the default BT.601 limited range. Saturated
// colours make a wrong matrix or range show (BT.601 read as BT.709 is off by ~20 levels).
std::array<std::uint8_t, 3> saturated(int x, int y) {
  return {static_cast<std::uint8_t>(230 - x), static_cast<std::uint8_t>(20 + y), static_cast<std::uint8_t>(200 - x / 2)};
}

class ColorimetryTest : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {
 protected:
  void SetUp() override { engine = install_fake_engine(); }
  void TearDown() override { uninstall_fake_engine(); }
  std::shared_ptr<FakeEngineState> engine;
};

TEST_P(ColorimetryTest, YuvComesBackAsTheSameRgb) {
  const auto [format, colorimetry] = GetParam();
  const std::string yuv_caps = std::string(format) + ",colorimetry=" + colorimetry;  // follows "format="
  GstBuffer* input = frame_in(rgb_buffer(112, 112, saturated), yuv_caps, 112, 112, false, 0);
  ASSERT_NE(input, nullptr) << "videoconvert to " << yuv_caps;
  gst_buffer_unref(through_element(input, yuv_caps, 112, 112));
  ASSERT_EQ(engine->faces_seen(), 1u);
  const Diff d = compare(engine->inputs[0], expected_chw(112, 112, saturated));
  EXPECT_LT(d.mean, 0.03) << yuv_caps;
  EXPECT_LT(d.max, 0.15) << yuv_caps;
}

INSTANTIATE_TEST_SUITE_P(Colorimetries, ColorimetryTest,
                         ::testing::Combine(::testing::Values("I420", "NV12"),
                                            ::testing::Values("bt601", "bt709", "1:3:5:1", "1:4:0:0")),
                         [](const auto& info) {
                           std::string name = std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
                           for (char& c : name)
                             if (c == ':') c = '_';
                           return name;
                         });

// A face region at odd coordinates of a 4:2:0 frame: the crop must take each pixel's own chroma
// sample, so it matches the same region cut from the RGB frame the YUV one was made from. The
// pattern's colour changes fast enough that a chroma sample one block off shows.
class YuvRegionTest : public FormatTest {};

TEST_P(YuvRegionTest, OddPlacedRegionMatchesTheRgbFrame) {
  const auto [fc, strided] = GetParam();
  constexpr int kW = 64, kH = 48;
  const auto steep = [](int x, int y) {
    return std::array<std::uint8_t, 3>{static_cast<std::uint8_t>(20 + 3 * x), static_cast<std::uint8_t>(220 - 4 * y),
                                       static_cast<std::uint8_t>(40 + 2 * (x + y))};
  };
  auto embed_region = [&](GstBuffer* frame, const char* format) {
    gst_buffer_add_video_region_of_interest_meta(frame, "face", 13, 7, 31, 31);
    gst_buffer_unref(through_element(frame, format, kW, kH, "rois"));
  };
  GstBuffer* yuv = frame_in(rgb_buffer(kW, kH, steep), fc.format, kW, kH, strided, 20);
  ASSERT_NE(yuv, nullptr);
  embed_region(rgb_buffer(kW, kH, steep), "RGB");
  embed_region(yuv, fc.format);
  ASSERT_EQ(engine->faces_seen(), 2u);
  const Diff d = compare(engine->inputs[1], engine->inputs[0]);
  EXPECT_LT(d.mean, 0.03) << fc.format;
  EXPECT_LT(d.max, 0.15) << fc.format;
}

INSTANTIATE_TEST_SUITE_P(YuvRegions, YuvRegionTest,
                         ::testing::Combine(::testing::Values(FormatCase{"I420", true}, FormatCase{"NV12", true}),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).format) +
                                  (std::get<1>(info.param) ? "_strided" : "_packed");
                         });

class OddSizeTest : public FormatTest {};

TEST_P(OddSizeTest, OddSizedFramesAreResizedWithoutGarbage) {
  const auto [fc, strided] = GetParam();
  constexpr int kW = 75, kH = 51;  // odd: 4:2:0 chroma planes round up
  const auto uniform = [](int, int) { return std::array<std::uint8_t, 3>{180, 90, 30}; };
  GstBuffer* input = frame_in(rgb_buffer(kW, kH, uniform), fc.format, kW, kH, strided, 13);
  ASSERT_NE(input, nullptr);
  gst_buffer_unref(through_element(input, fc.format, kW, kH));
  ASSERT_EQ(engine->faces_seen(), 1u);
  // A uniform colour stays uniform after resizing: any padding byte (0xAB) would show.
  const Diff d = compare(engine->inputs[0], expected_chw(112, 112, uniform));
  EXPECT_LT(d.max, fc.yuv ? 0.05 : 1e-6) << fc.format;
}

INSTANTIATE_TEST_SUITE_P(OddSizes, OddSizeTest,
                         ::testing::Combine(::testing::Values(FormatCase{"RGB", false}, FormatCase{"xBGR", false},
                                                              FormatCase{"I420", true}, FormatCase{"NV12", true}),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).format) +
                                  (std::get<1>(info.param) ? "_strided" : "_packed");
                         });

class ChannelOrderTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { engine = install_fake_engine(); }
  void TearDown() override { uninstall_fake_engine(); }
  std::shared_ptr<FakeEngineState> engine;
};

TEST_P(ChannelOrderTest, DecidesWhichPlaneTheEngineSeesFirst) {
  const std::string order = GetParam();
  const auto orange = [](int, int) { return std::array<std::uint8_t, 3>{255, 128, 0}; };
  GstHarness* h = adaface_harness({{"bundle", "fake"}, {"input-mode", "crops"}, {"channel-order", order}});
  gst_harness_set_src_caps_str(h, "video/x-raw,format=RGB,width=112,height=112,framerate=30/1");
  gst_buffer_unref(gst_harness_push_and_pull(h, rgb_buffer(112, 112, orange)));
  gst_harness_teardown(h);
  ASSERT_EQ(engine->faces_seen(), 1u);
  const std::vector<float>& in = engine->inputs[0];
  const std::size_t plane = 112 * 112;
  // Red is 255 -> +1, blue is 0 -> -1.
  if (order == "rgb") {
    EXPECT_FLOAT_EQ(in[0], 1.0f);
    EXPECT_FLOAT_EQ(in[2 * plane], -1.0f);
  } else {
    EXPECT_FLOAT_EQ(in[0], -1.0f);
    EXPECT_FLOAT_EQ(in[2 * plane], 1.0f);
  }
  EXPECT_NEAR(in[plane], (128 / 255.0f - 0.5f) / 0.5f, 1e-6);
  EXPECT_EQ(in, expected_chw(112, 112, orange, order == "bgr"));
}

INSTANTIATE_TEST_SUITE_P(Orders, ChannelOrderTest, ::testing::Values("rgb", "bgr"));

// A buffer whose GstVideoMeta describes more than it holds: gst_video_frame_map trusts the meta,
// the element must not. Each is an element error naming the problem; nothing is read past the end.
struct BadLayout {
  const char* name;
  const char* format;
  int width, height;
  gsize size;                                  // bytes the buffer really holds
  std::vector<gsize> offsets;                  // the meta's plane offsets
  std::vector<gint> strides;                   // the meta's plane strides
  const char* says;                            // part of the error's debug text
};

void PrintTo(const BadLayout& c, std::ostream* os) { *os << c.name; }

class BadLayoutTest : public ::testing::TestWithParam<BadLayout> {
 protected:
  void SetUp() override { engine = install_fake_engine(); }
  void TearDown() override { uninstall_fake_engine(); }
  std::shared_ptr<FakeEngineState> engine;
};

TEST_P(BadLayoutTest, IsAnElementErrorNotAReadPastTheEnd) {
  const BadLayout& c = GetParam();
  GstBuffer* buffer = gst_buffer_new_allocate(nullptr, c.size, nullptr);
  gst_buffer_memset(buffer, 0, 0x80, c.size);
  gsize offsets[GST_VIDEO_MAX_PLANES] = {};
  gint strides[GST_VIDEO_MAX_PLANES] = {};
  for (std::size_t p = 0; p < c.offsets.size(); ++p) offsets[p] = c.offsets[p], strides[p] = c.strides[p];
  gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, gst_video_format_from_string(c.format),
                                 static_cast<guint>(c.width), static_cast<guint>(c.height),
                                 static_cast<guint>(c.offsets.size()), offsets, strides);
  GstHarness* h = adaface_harness({{"bundle", "fake"}, {"input-mode", "crops"}});
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(h->element, bus);
  gchar* caps = g_strdup_printf("video/x-raw,format=%s,width=%d,height=%d,framerate=30/1", c.format, c.width, c.height);
  gst_harness_set_src_caps_str(h, caps);
  g_free(caps);
  EXPECT_EQ(gst_harness_push(h, buffer), GST_FLOW_OK);  // queued; the task finds the problem
  GstMessage* error = gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND, GST_MESSAGE_ERROR);
  ASSERT_NE(error, nullptr) << "no element error for " << c.name;
  GError* gerror = nullptr;
  gchar* debug = nullptr;
  gst_message_parse_error(error, &gerror, &debug);
  EXPECT_TRUE(g_error_matches(gerror, GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED));
  EXPECT_NE(std::string(debug).find(c.says), std::string::npos) << debug;
  g_error_free(gerror);
  g_free(debug);
  gst_message_unref(error);
  EXPECT_EQ(engine->faces_seen(), 0u) << "nothing reached the engine";
  gst_element_set_bus(h->element, nullptr);
  gst_object_unref(bus);
  gst_harness_teardown(h);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, BadLayoutTest,
    ::testing::Values(
        // Half the rows of a 640x480 RGB frame (the silent garbage; SIGSEGV at 4096x2160).
        BadLayout{"ShortBuffer", "RGB", 640, 480, 640 * 3 * 240, {0}, {640 * 3}, "plane 0 needs 921600 bytes"},
        BadLayout{"ShortBuffer4K", "RGB", 4096, 2160, 4096 * 3 * 16, {0}, {4096 * 3}, "plane 0 needs"},
        // A stride twice the real one over a buffer sized for the real one.
        BadLayout{"LyingStride", "RGB", 640, 480, 640 * 3 * 480, {0}, {640 * 3 * 2}, "plane 0 needs"},
        BadLayout{"StrideBelowTheRow", "RGB", 640, 480, 640 * 3 * 480, {0}, {100}, "below its row of 1920 bytes"},
        BadLayout{"NegativeStride", "RGB", 640, 480, 640 * 3 * 480, {0}, {-640 * 3}, "stride -1920"},
        BadLayout{"OffsetNearTheEnd", "RGB", 64, 48, 64 * 3 * 48, {64 * 3 * 48 - 10}, {64 * 3}, "plane 0 needs"},
        BadLayout{"NegativeOffset", "RGB", 64, 48, 64 * 3 * 48, {static_cast<gsize>(-64)}, {64 * 3},
                  "outside the buffer"},
        // I420: the V plane's offset lies in the buffer but its rows run past the end.
        BadLayout{"ChromaPastTheEnd", "I420", 64, 48, 64 * 48 + 32 * 24 + 100, {0, 64 * 48, 64 * 48 + 32 * 24},
                  {64, 32, 32}, "plane 2 needs"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace

// taconiteoverlay: in every accepted format a face ROI's box, landmarks and label come out in its
// identity state's colour and the pixels away from it are untouched (read back through a real
// videoconvert, so the colours are checked against GStreamer's conversion, not ours); hostile
// ROIs (outside the frame, huge, NaN landmarks, odd 4:2:0 sizes) are survived; the bounds hold;
// lines and labels grow with the frame, and neighbouring faces' labels do not cover each other.
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "face_drawing.hpp"
#include "face_frames.hpp"
#include "face_marks.hpp"
#include "gst_test_support.hpp"
#include "label_layout.hpp"
#include "roi_params.hpp"
#include "roi_track_param.hpp"

namespace {

using taconite::vision::Point2;
using Rgb = std::array<int, 3>;

constexpr int kWidth = 160, kHeight = 120;
constexpr Rgb kBackground{30, 30, 30};
// The face: even coordinates, so 4:2:0 chroma samples fall on the box edge exactly.
constexpr guint kBoxX = 40, kBoxY = 40, kBoxSide = 64;
constexpr int kLineWidth = 6;
const std::vector<Point2> kLandmarks{{60, 64}, {84, 64}, {72, 76}, {62, 90}, {82, 90}};

const char* const kFormats[] = {"RGB", "BGR", "RGBx", "BGRx", "xRGB", "xBGR", "RGBA", "BGRA", "I420", "NV12"};

// An identity state as taconiteidentify writes it, and the colour docs/gstreamer.md gives it.
struct StateCase {
  const char* name;
  bool has_identity;
  const char* label_state;  // nullptr: a param written before label_state existed
  const char* label;        // nullptr: undecided
  gint label_id;
  double confidence;
  Rgb colour;
};
const StateCase kStates[] = {
    {"none", false, nullptr, nullptr, 0, 0.0, {255, 255, 255}},
    {"pending", true, "pending", nullptr, 0, 0.0, {255, 255, 0}},
    {"known", true, "known", "alice", 1, 0.83, {0, 255, 0}},
    {"unknown", true, "unknown", "unknown", -1, 0.31, {255, 0, 0}},
    {"legacy_known", true, nullptr, "bob", 2, 0.9, {0, 255, 0}},
};

void PrintTo(const StateCase& state, std::ostream* os) { *os << state.name; }

GstBuffer* background_frame(const char* format, int width, int height) {
  GstBuffer* rgb = gsttest::rgb_buffer(width, height, [](int, int) {
    return std::array<std::uint8_t, 3>{kBackground[0], kBackground[1], kBackground[2]};
  });
  GstBuffer* converted = gsttest::convert_rgb(rgb, width, height, format);
  gst_buffer_unref(rgb);
  return converted;
}

GstVideoRegionOfInterestMeta* add_face(GstBuffer* buffer, guint x, guint y, guint w, guint h,
                                       const std::vector<Point2>& landmarks) {
  GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(buffer, "face", x, y, w, h);
  if (!landmarks.empty())
    taconite::gst::set_roi_points(roi, "landmarks", landmarks);
  return roi;
}

void add_identity(GstVideoRegionOfInterestMeta* roi, const StateCase& state) {
  if (!state.has_identity) return;
  GstStructure* identity = gst_structure_new_empty("identity");
  if (state.label_state) gst_structure_set(identity, "label_state", G_TYPE_STRING, state.label_state, nullptr);
  if (state.label)
    gst_structure_set(identity, "label", G_TYPE_STRING, state.label, "label_id", G_TYPE_INT, state.label_id,
                      "confidence", G_TYPE_DOUBLE, state.confidence, nullptr);
  gst_video_region_of_interest_meta_add_param(roi, identity);
}

GstHarness* overlay_harness(const char* format, int width, int height) {
  GstHarness* h = gst_harness_new("taconiteoverlay");
  gst_harness_set_src_caps_str(h, gsttest::video_caps(format, width, height).c_str());
  g_object_set(h->element, "line-width", static_cast<guint>(kLineWidth), nullptr);
  return h;
}

// A buffer of `format` as packed RGB, for reading pixels (at its GstVideoMeta's strides, if any).
class RgbPixels {
 public:
  RgbPixels(GstBuffer* buffer, const char* format, int width, int height)
      : rgb_(gsttest::convert_video(buffer, width, height, format, "RGB")) {
    GstVideoInfo info;
    gst_video_info_set_format(&info, GST_VIDEO_FORMAT_RGB, static_cast<guint>(width), static_cast<guint>(height));
    mapped_ = rgb_ && gst_video_frame_map(&frame_, &info, rgb_, GST_MAP_READ);
  }
  ~RgbPixels() {
    if (mapped_) gst_video_frame_unmap(&frame_);
    if (rgb_) gst_buffer_unref(rgb_);
  }
  bool ok() const { return mapped_; }
  Rgb at(int x, int y) const {
    const auto* p = static_cast<const guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&frame_, 0)) +
                    y * GST_VIDEO_FRAME_PLANE_STRIDE(&frame_, 0) + x * 3;
    return {p[0], p[1], p[2]};
  }

 private:
  GstBuffer* rgb_;
  GstVideoFrame frame_{};
  bool mapped_ = false;
};

::testing::AssertionResult near_colour(const Rgb& got, const Rgb& want, int tolerance) {
  for (int c = 0; c < 3; ++c)
    if (std::abs(got[c] - want[c]) > tolerance)
      return ::testing::AssertionFailure() << "got (" << got[0] << "," << got[1] << "," << got[2] << "), want ("
                                           << want[0] << "," << want[1] << "," << want[2] << ") +-" << tolerance;
  return ::testing::AssertionSuccess();
}

class OverlayFormatTest : public ::testing::TestWithParam<std::tuple<const char*, StateCase>> {};

TEST_P(OverlayFormatTest, DrawsBoxLandmarksAndLabelInTheStateColourAndNothingElse) {
  const auto& [format, state] = GetParam();
  GstBuffer* in = background_frame(format, kWidth, kHeight);
  ASSERT_NE(in, nullptr);
  GstVideoRegionOfInterestMeta* roi = add_face(in, kBoxX, kBoxY, kBoxSide, kBoxSide, kLandmarks);
  taconite::gst::set_roi_track_id(roi, 7);
  add_identity(roi, state);
  const RgbPixels before(in, format, kWidth, kHeight);
  ASSERT_TRUE(before.ok());

  GstHarness* h = overlay_harness(format, kWidth, kHeight);
  ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  ASSERT_NE(out, nullptr);
  const RgbPixels after(out, format, kWidth, kHeight);
  ASSERT_TRUE(after.ok());

  // Packed formats hold the colour exactly; 4:2:0 through videoconvert's chroma filter, roughly.
  const int tolerance = std::string(format) == "I420" || std::string(format) == "NV12" ? 60 : 0;
  const int mid = static_cast<int>(kBoxY + kBoxSide / 2), edge = kLineWidth / 2;
  EXPECT_TRUE(near_colour(after.at(kBoxX + edge, mid), state.colour, tolerance)) << "left edge";
  EXPECT_TRUE(near_colour(after.at(kBoxX + kBoxSide - 1 - edge, mid), state.colour, tolerance)) << "right edge";
  EXPECT_TRUE(near_colour(after.at(mid, kBoxY + edge), state.colour, tolerance)) << "top edge";
  EXPECT_TRUE(near_colour(after.at(72, 76), state.colour, tolerance)) << "nose landmark";
  EXPECT_EQ(after.at(52, 52), before.at(52, 52)) << "inside the box, away from edges and dots";

  // The label sits above the box (moved left when it would leave the frame): text pixels (bright)
  // on its black band.
  int text_pixels = 0, band_pixels = 0;
  for (int y = 0; y < static_cast<int>(kBoxY); ++y)
    for (int x = 0; x < kWidth; ++x) {
      const Rgb p = after.at(x, y);
      if (std::max({p[0], p[1], p[2]}) > 120) ++text_pixels;
      if (std::max({p[0], p[1], p[2]}) < 12) ++band_pixels;
    }
  EXPECT_GT(text_pixels, 20) << "label text";
  EXPECT_GT(band_pixels, 100) << "label band";

  // Everything away from the box and its label is the input's, pixel for pixel.
  const int margin = 8;  // 4:2:0 chroma reconstruction reaches a few pixels past a drawn edge
  int changed = 0;
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x) {
      const bool near_face = x >= static_cast<int>(kBoxX) - margin && x < static_cast<int>(kBoxX + kBoxSide) + margin &&
                             y < static_cast<int>(kBoxY + kBoxSide) + margin;
      const bool near_label = y < static_cast<int>(kBoxY) + margin;
      if (!near_face && !near_label && before.at(x, y) != after.at(x, y)) ++changed;
    }
  EXPECT_EQ(changed, 0);

  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

INSTANTIATE_TEST_SUITE_P(EveryFormatAndState, OverlayFormatTest,
                         ::testing::Combine(::testing::ValuesIn(kFormats), ::testing::ValuesIn(kStates)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param).name;
                         });

class OverlayHostileTest : public ::testing::TestWithParam<const char*> {};

// Boxes outside or far larger than an odd-sized frame, non-finite and far-away landmarks, a label
// of control bytes and an int64 track id: drawn where they touch the frame, never a crash.
TEST_P(OverlayHostileTest, SurvivesHostileRoisOnOddFrames) {
  const char* format = GetParam();
  constexpr int w = 161, h = 121;
  GstBuffer* in = background_frame(format, w, h);
  ASSERT_NE(in, nullptr);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  add_face(in, 10000, 10000, 50, 50, {});                                    // entirely outside
  add_face(in, 0, 0, G_MAXUINT, G_MAXUINT, {{nan, nan}, {inf, -inf}});        // huge, NaN landmarks
  add_face(in, 150, 110, 400, 400, {{1e300, -1e300}, {160, 120}, {-5, 3}});   // across the corner
  add_face(in, 160, 120, 1, 1, {});                                          // the last pixel
  add_face(in, 5, 5, 0, 0, {});                                              // empty
  GstVideoRegionOfInterestMeta* odd = add_face(in, G_MAXUINT - 5, 3, G_MAXUINT, 9, {});
  taconite::gst::set_roi_track_id(odd, G_MAXINT64);
  gst_video_region_of_interest_meta_add_param(
      odd, gst_structure_new("identity", "label", G_TYPE_STRING, "\x01\n\xe2\x9c\x93 a very long name that goes "
                             "on and on and on past any label width", "confidence", G_TYPE_DOUBLE, nan, nullptr));

  GstHarness* harness = overlay_harness(format, w, h);
  ASSERT_EQ(gst_harness_push(harness, in), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(harness);
  ASSERT_NE(out, nullptr);
  const RgbPixels after(out, format, w, h);
  ASSERT_TRUE(after.ok());
  // The huge box's top-left edges lie in the frame: drawn white (no identity state).
  EXPECT_TRUE(near_colour(after.at(2, h / 2), {255, 255, 255}, 60));
  gst_buffer_unref(out);
  gst_harness_teardown(harness);
}

INSTANTIATE_TEST_SUITE_P(EveryFormat, OverlayHostileTest, ::testing::ValuesIn(kFormats));

// Frames without face ROIs, or with the element disabled, pass on as the very buffer that came in.
TEST(OverlayTest, PassesFramesWithNothingToDrawUntouched) {
  GstHarness* h = overlay_harness("I420", kWidth, kHeight);
  GstBuffer* plain = background_frame("I420", kWidth, kHeight);
  gst_buffer_add_video_region_of_interest_meta(plain, "person", 10, 10, 50, 50);  // not roi-type
  gst_buffer_ref(plain);  // shared: an element that wrote would have to copy it
  ASSERT_EQ(gst_harness_push(h, plain), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  EXPECT_EQ(out, plain);
  gst_buffer_unref(out);

  g_object_set(h->element, "enabled", FALSE, nullptr);
  GstBuffer* face = background_frame("I420", kWidth, kHeight);
  add_face(face, kBoxX, kBoxY, kBoxSide, kBoxSide, kLandmarks);
  gst_buffer_ref(face);
  ASSERT_EQ(gst_harness_push(h, face), GST_FLOW_OK);
  out = gst_harness_pull(h);
  EXPECT_EQ(out, face);
  gst_buffer_unref(out);
  gst_buffer_unref(plain);
  gst_buffer_unref(face);
  gst_harness_teardown(h);
}

// A shared input keeps its pixels: the drawing lands on a copy of its memory.
TEST(OverlayTest, DrawsOnACopyOfASharedBuffer) {
  GstHarness* h = overlay_harness("RGB", kWidth, kHeight);
  GstBuffer* in = background_frame("RGB", kWidth, kHeight);
  add_face(in, kBoxX, kBoxY, kBoxSide, kBoxSide, kLandmarks);
  gst_buffer_ref(in);
  ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  const RgbPixels original(in, "RGB", kWidth, kHeight), drawn(out, "RGB", kWidth, kHeight);
  EXPECT_TRUE(near_colour(original.at(kBoxX + 1, kBoxY + 10), kBackground, 0));
  EXPECT_TRUE(near_colour(drawn.at(kBoxX + 1, kBoxY + 10), {255, 255, 255}, 0));
  gst_buffer_unref(out);
  gst_buffer_unref(in);
  gst_harness_teardown(h);
}

// Frames whose planes are padded (a GstVideoMeta with wider strides) are drawn at the meta's strides.
TEST(OverlayTest, DrawsOnPaddedStrides) {
  for (const char* format : {"RGB", "I420", "NV12"}) {
    SCOPED_TRACE(format);
    GstBuffer* plain = background_frame(format, kWidth, kHeight);
    GstBuffer* in = gsttest::restride(plain, format, kWidth, kHeight, 24);
    gst_buffer_unref(plain);
    ASSERT_NE(in, nullptr);
    add_face(in, kBoxX, kBoxY, kBoxSide, kBoxSide, kLandmarks);
    GstHarness* h = overlay_harness(format, kWidth, kHeight);
    ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    const RgbPixels drawn(out, format, kWidth, kHeight);
    ASSERT_TRUE(drawn.ok());
    EXPECT_TRUE(near_colour(drawn.at(kBoxX + kLineWidth / 2, kBoxY + kBoxSide / 2), {255, 255, 255}, 60));
    EXPECT_TRUE(
        near_colour(drawn.at(kBoxX + kBoxSide - 1 - kLineWidth / 2, kBoxY + kBoxSide / 2), {255, 255, 255}, 60));
    gst_buffer_unref(out);
    gst_harness_teardown(h);
  }
}

// At most max-rois ROIs are drawn per frame: the first ones.
TEST(OverlayTest, DrawsAtMostMaxRois) {
  GstHarness* h = overlay_harness("RGB", kWidth, kHeight);
  g_object_set(h->element, "max-rois", 1u, "draw-labels", FALSE, nullptr);
  GstBuffer* in = background_frame("RGB", kWidth, kHeight);
  add_face(in, 10, 60, 30, 30, {});
  for (int i = 0; i < 300; ++i) add_face(in, 100, 60, 30, 30, {});
  ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  const RgbPixels drawn(out, "RGB", kWidth, kHeight);
  EXPECT_TRUE(near_colour(drawn.at(11, 75), {255, 255, 255}, 0)) << "the first ROI";
  EXPECT_TRUE(near_colour(drawn.at(101, 75), kBackground, 0)) << "the ROIs past max-rois";
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// The drawn sizes of one face on a frame `height` lines high (16:9): the box's left edge width and
// the label band's height, both measured in the pixels (the band is black, the background grey).
struct DrawnSizes {
  int edge = 0, band = 0;
};
DrawnSizes drawn_sizes(int height) {
  const int width = height * 16 / 9;
  const guint x = static_cast<guint>(width / 4), y = static_cast<guint>(height / 2), side = static_cast<guint>(height / 4);
  GstBuffer* in = background_frame("RGB", width, height);
  taconite::gst::set_roi_track_id(add_face(in, x, y, side, side, {}), 7);
  GstHarness* h = gst_harness_new("taconiteoverlay");  // the default line width and font scale
  gst_harness_set_src_caps_str(h, gsttest::video_caps("RGB", width, height).c_str());
  DrawnSizes sizes;
  if (gst_harness_push(h, in) == GST_FLOW_OK) {
    GstBuffer* out = gst_harness_pull(h);
    const RgbPixels drawn(out, "RGB", width, height);
    const auto white = [](const Rgb& p) { return std::min({p[0], p[1], p[2]}) > 200; };
    const auto black = [](const Rgb& p) { return std::max({p[0], p[1], p[2]}) < 12; };
    const int row = static_cast<int>(y + side / 2), column = static_cast<int>(x) + 1;  // the band's padding
    while (sizes.edge < static_cast<int>(side) && white(drawn.at(static_cast<int>(x) + sizes.edge, row))) ++sizes.edge;
    while (sizes.band < static_cast<int>(y) && black(drawn.at(column, static_cast<int>(y) - 1 - sizes.band))) ++sizes.band;
    gst_buffer_unref(out);
  }
  gst_harness_teardown(h);
  return sizes;
}

// The defaults are sized for 480 lines: a 1080p frame gets its box edges and label 2.25 times as
// large (they were the same few pixels on every frame size), smaller frames keep the defaults.
TEST(OverlayTest, LinesAndLabelsGrowWithTheFrameHeight) {
  const DrawnSizes small = drawn_sizes(240), reference = drawn_sizes(480), full_hd = drawn_sizes(1080);
  EXPECT_EQ(reference.edge, 2);
  EXPECT_EQ(small.edge, reference.edge);
  EXPECT_EQ(small.band, reference.band);
  EXPECT_GT(reference.band, 12);
  EXPECT_GE(full_hd.edge, 4);
  EXPECT_GT(full_hd.band, 1.8 * reference.band) << "480 lines: " << reference.band << " px, 1080: " << full_hd.band;
}

// The style scale is bounded: a huge frame gets at most 4 times the properties' sizes.
TEST(OverlayTest, StyleScaleIsBounded) {
  const taconite::gst::OverlayStyle base{3, 0.5, true, true};
  const auto huge = taconite::gst::style_for_frame(base, 1 << 30);
  EXPECT_EQ(huge.line_width, 12);
  EXPECT_DOUBLE_EQ(huge.font_scale, 2.0);
  EXPECT_EQ(taconite::gst::style_for_frame(base, 0).line_width, 3);
}

::testing::AssertionResult inside(const taconite::gst::PixelRect& r, int width, int height) {
  if (r.x >= 0 && r.y >= 0 && r.x + r.width <= width && r.y + r.height <= height) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "band " << r.x << "," << r.y << " " << r.width << "x" << r.height
                                       << " leaves the " << width << "x" << height << " frame";
}

// Two faces side by side, closer than a label is wide: the second label goes below its box instead
// of over the first (both used to sit above their boxes, overlapping).
TEST(LabelLayoutTest, NeighbouringFacesLabelsDoNotIntersect) {
  using taconite::gst::PixelRect;
  taconite::gst::LabelLayout layout(640, 480);
  const PixelRect left_face{100, 200, 60, 60}, right_face{170, 200, 60, 60};
  const PixelRect first = layout.place(left_face, 150, 20), second = layout.place(right_face, 150, 20);
  EXPECT_EQ(first.y, 180) << "above its box";
  EXPECT_EQ(first.x, 100);
  EXPECT_FALSE(taconite::gst::rects_intersect(first, second));
  EXPECT_EQ(second.y, 260) << "below its box";
  EXPECT_EQ(second.x, 170);
}

// A row of ten touching faces with labels three faces wide, along the frame's top (no room above):
// every label lands inside the frame and none covers another.
TEST(LabelLayoutTest, ARowOfFacesGetsLabelsThatCoverNoOther) {
  using taconite::gst::PixelRect;
  constexpr int width = 640, height = 480;
  taconite::gst::LabelLayout layout(width, height);
  std::vector<PixelRect> bands;
  for (int i = 0; i < 10; ++i) bands.push_back(layout.place({i * 40, 0, 40, 40}, 120, 16));
  EXPECT_EQ(bands[0].y, 40) << "below the first box (no room above)";
  for (std::size_t i = 0; i < bands.size(); ++i) {
    EXPECT_TRUE(inside(bands[i], width, height));
    for (std::size_t j = 0; j < i; ++j)
      EXPECT_FALSE(taconite::gst::rects_intersect(bands[i], bands[j])) << "labels " << j << " and " << i;
  }
}

// Bounded work: hundreds of faces on one spot each get a band in the frame (the first place once
// every place is taken), and a band wider than the frame starts at its left edge.
TEST(LabelLayoutTest, CrowdedAndOversizedLabelsStayInTheFrame) {
  taconite::gst::LabelLayout layout(160, 120);
  for (int i = 0; i < 256; ++i) {
    const taconite::gst::PixelRect band = layout.place({60, 60, 20, 20}, 40, 12);
    ASSERT_TRUE(inside(band, 160, 120)) << "label " << i;
  }
  const taconite::gst::PixelRect wide = layout.place({150, 10, 5, 5}, 400, 12);
  EXPECT_EQ(wide.x, 0);
  EXPECT_GE(wide.y, 0);
}

// The label reads "#<track> <name> <confidence>", each part when known, in printable ASCII, bounded.
TEST(OverlayTest, LabelTextNamesTrackIdentityAndConfidence) {
  using taconite::gst::face_label_text;
  using taconite::gst::FaceMark;
  FaceMark known;
  known.track_id = 7;
  known.state = GST_TACONITE_LABEL_STATE_KNOWN;
  known.label = "alice";
  known.confidence = 0.8349;
  EXPECT_EQ(face_label_text(known, 48), "#7 alice 0.83");
  FaceMark pending;
  pending.track_id = 12;
  pending.state = GST_TACONITE_LABEL_STATE_PENDING;
  EXPECT_EQ(face_label_text(pending, 48), "#12 pending");
  EXPECT_EQ(face_label_text(FaceMark{}, 48), "");  // untracked, no identity: no label
  FaceMark hostile;
  hostile.label = "a\x01\n\xe2\x9c\x93" + std::string(100, 'z');
  const std::string text = face_label_text(hostile, 48);
  EXPECT_EQ(text.size(), 48u);
  EXPECT_EQ(text.substr(0, 6), "a?????");
}

}  // namespace

// The 2023mar output arithmetic and the overlap suppression, on hand-made outputs (no network).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "yunet_detector.hpp"

namespace {

using taconite::vision::DetectedFace;
using taconite::vision::StrideOutputs;

// Outputs of a 4x3-cell stride-16 map, all cells empty except those set by the test.
struct FakeStride {
  int columns = 4, rows = 3;
  std::vector<float> cls = std::vector<float>(12, 0.0f), obj = std::vector<float>(12, 0.0f);
  std::vector<float> bbox = std::vector<float>(48, 0.0f), kps = std::vector<float>(120, 0.0f);
  StrideOutputs view() const { return {16, columns, rows, cls.data(), obj.data(), bbox.data(), kps.data()}; }
};

TEST(YuNetDecode, CellOffsetsAndLogSizesBecomeInputPixels) {
  FakeStride f;
  const int cell = 1 * 4 + 2;  // row 1, column 2
  f.cls[cell] = 0.81f;
  f.obj[cell] = 1.0f;
  f.bbox[4 * cell + 0] = 0.5f;               // centre x offset, cells
  f.bbox[4 * cell + 1] = 0.25f;              // centre y offset
  f.bbox[4 * cell + 2] = std::log(2.0f);     // width: 2 cells
  f.bbox[4 * cell + 3] = std::log(3.0f);     // height: 3 cells
  for (int p = 0; p < 5; ++p) {
    f.kps[10 * cell + 2 * p] = 0.1f * p;
    f.kps[10 * cell + 2 * p + 1] = -0.2f * p;
  }
  const std::vector<DetectedFace> faces = taconite::vision::decode_stride(f.view(), 0.5f);
  ASSERT_EQ(faces.size(), 1u);
  const DetectedFace& face = faces[0];
  EXPECT_NEAR(face.score, 0.9f, 1e-6);  // sqrt(0.81 * 1)
  EXPECT_NEAR(face.box.x + face.box.width / 2, (2 + 0.5f) * 16, 1e-4);
  EXPECT_NEAR(face.box.y + face.box.height / 2, (1 + 0.25f) * 16, 1e-4);
  EXPECT_NEAR(face.box.width, 32.0f, 1e-3);
  EXPECT_NEAR(face.box.height, 48.0f, 1e-3);
  for (int p = 0; p < 5; ++p) {
    EXPECT_NEAR(face.landmarks[p].x, (2 + 0.1f * p) * 16, 1e-4);
    EXPECT_NEAR(face.landmarks[p].y, (1 - 0.2f * p) * 16, 1e-4);
  }
}

TEST(YuNetDecode, ScoresBelowTheThresholdAndNonFiniteOutputsGiveNoFace) {
  FakeStride f;
  f.cls[0] = 0.25f;  // score 0.5 with obj 1
  f.obj[0] = 1.0f;
  f.cls[1] = 1.0f;
  f.obj[1] = 1.0f;
  f.kps[10 * 1 + 3] = NAN;  // a broken landmark
  f.cls[2] = NAN;            // a broken score
  f.obj[2] = 1.0f;
  f.cls[3] = 1.0f;
  f.obj[3] = 1.0f;
  f.bbox[4 * 3 + 2] = 1e30f;  // a huge log-size stays finite (bounded)
  const std::vector<DetectedFace> faces = taconite::vision::decode_stride(f.view(), 0.6f);
  ASSERT_EQ(faces.size(), 1u);
  EXPECT_TRUE(std::isfinite(faces[0].box.width));
  EXPECT_EQ(taconite::vision::decode_stride(f.view(), 0.4f).size(), 2u);
}

DetectedFace face_at(float x, float y, float size, float score) {
  DetectedFace f;
  f.box = cv::Rect2f(x, y, size, size);
  f.score = score;
  return f;
}

TEST(YuNetDecode, OverlapsKeepTheBestFaceAndTheCountIsCapped) {
  std::vector<DetectedFace> faces = {face_at(0, 0, 100, 0.7f), face_at(5, 5, 100, 0.9f), face_at(300, 0, 50, 0.8f),
                                     face_at(600, 0, 50, 0.65f)};
  const std::vector<DetectedFace> kept = taconite::vision::suppress_overlaps(faces, 0.3f, 10);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_FLOAT_EQ(kept[0].score, 0.9f);  // best first; the 0.7 face under it is gone
  EXPECT_FLOAT_EQ(kept[1].score, 0.8f);
  EXPECT_FLOAT_EQ(kept[2].score, 0.65f);
  EXPECT_EQ(taconite::vision::suppress_overlaps(faces, 0.3f, 2).size(), 2u);
}

TEST(YuNetDecode, MaxFacesCountsFacesNotTheDuplicatesSuppressedForThem) {
  // 10 overlapping candidates of one face outscore a second face: max_faces=2 keeps both faces.
  std::vector<DetectedFace> faces;
  for (int i = 0; i < 10; ++i) faces.push_back(face_at(static_cast<float>(i), 0, 100, 0.95f - 0.001f * i));
  faces.push_back(face_at(400, 0, 100, 0.7f));
  const std::vector<DetectedFace> kept = taconite::vision::suppress_overlaps(faces, 0.3f, 2);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_FLOAT_EQ(kept[0].score, 0.95f);
  EXPECT_FLOAT_EQ(kept[1].score, 0.7f);
}

// What validate() says is wrong ("" when nothing is); a refusal is always an Input error.
std::string problem(const taconite::vision::YuNetOptions& o) {
  const taconite::Status valid = taconite::vision::validate(o);
  if (valid) return "";
  EXPECT_EQ(valid.error().kind, taconite::ErrorKind::Input);
  return valid.error().message;
}

TEST(YuNetOptions, OutOfRangeValuesAreNamed) {
  taconite::vision::YuNetOptions o;
  EXPECT_EQ(problem(o), "");
  o.input_width = 100;  // not a multiple of 32
  EXPECT_NE(problem(o).find("multiple of 32"), std::string::npos);
  o = {};
  o.input_height = 8192;
  EXPECT_NE(problem(o), "");
  o = {};
  o.score_threshold = NAN;
  EXPECT_NE(problem(o).find("score"), std::string::npos);
  o = {};
  o.max_faces = 0;
  EXPECT_NE(problem(o).find("max faces"), std::string::npos);
  o = {};
  o.threads = 1000;
  EXPECT_NE(problem(o).find("threads"), std::string::npos);
}

}  // namespace

// 1:1 verification on the real photos of ../shared/realfaces through the product's own detection
// and alignment (tools/faces' YuNet finder, as `taconite-gallery enroll --detector` and
// taconitedetect find faces: YuNet's 5 points, the similarity warp, each model's own normalisation), with both
// real ONNX embedders: every pair of the 162 photos scored (same person genuine, each impostor
// photo its own person), and the issue-30 targets asserted: TAR >= 0.95 at FAR 1e-3 and 1e-2.
// Exits 77 (skipped), saying why, without ../shared/realfaces or the YuNet model.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "image_file.hpp"
#include "photo_faces.hpp"
#include "real_embedders.hpp"
#include "verification_scores.hpp"
#include "yunet_face_finder.hpp"

namespace {

namespace fs = std::filesystem;
using namespace taconite::realfaces;

fs::path realfaces_dir() {
  const char* dir = std::getenv("TACONITE_REALFACES_DIR");
  return dir ? fs::path(dir) : fs::path();
}
fs::path yunet_model() {
  const char* model = std::getenv("TACONITE_YUNET_MODEL");
  return model ? fs::path(model) : fs::path();
}

// Every photo's YuNet-aligned face, found once for both models.
struct AlignedPhotos {
  std::vector<Photo> photos;
  std::vector<cv::Mat> aligned;  // one per photo (empty where YuNet found no face)
  std::vector<std::string> problems;
};

const AlignedPhotos& aligned_photos() {
  static const AlignedPhotos set = [] {
    AlignedPhotos s;
    auto listed = list_photos(realfaces_dir() / "photos");
    if (!listed) return s.problems.push_back(listed.error().message), s;
    s.photos = std::move(listed).value();
    auto finder = taconite::faces::YuNetFaceFinder::load(yunet_model().string(), {112, 112, {}}, 2);
    if (!finder) return s.problems.push_back(finder.error().message), s;
    for (const Photo& photo : s.photos) {
      auto bgr = taconite::faces::read_image((realfaces_dir() / "photos" / photo.relative).string());
      auto face = bgr ? largest_aligned_face(*finder.value(), bgr.value()) : taconite::Result<cv::Mat>(bgr.error());
      if (!face) s.problems.push_back(photo.relative + ": " + face.error().message);
      s.aligned.push_back(face ? std::move(face).value() : cv::Mat());
    }
    return s;
  }();
  return set;
}

class RealVerification : public ::testing::TestWithParam<RealEmbedder> {};

TEST_P(RealVerification, MeetsTheTargetTrueAcceptRatesThroughTheProductsDetectionAndAlignment) {
  const AlignedPhotos& set = aligned_photos();
  // The README of ../shared/realfaces: every photo holds a face YuNet finds.
  for (const std::string& problem : set.problems) ADD_FAILURE() << problem;
  ASSERT_TRUE(set.problems.empty());
  ASSERT_GE(set.photos.size(), 150u) << "the real photo set shrank";

  const fs::path scratch = fs::temp_directory_path() / ("taconite-verification-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  auto model = load_real_embedder(GetParam(), realfaces_dir(), scratch, 2);
  fs::remove_all(scratch);
  ASSERT_TRUE(model.ok()) << model.error().message;
  ASSERT_EQ(model.value()->embed_dim(), GetParam().dim);
  auto session = taconite::Session::create(model.value());
  ASSERT_TRUE(session.ok()) << session.error().message;
  auto embeddings = embed_faces(session.value(), set.aligned);
  ASSERT_TRUE(embeddings.ok()) << embeddings.error().message;

  std::vector<std::string> labels;
  for (const Photo& p : set.photos) labels.push_back(p.person);
  const PairScores scores = score_all_pairs(embeddings.value(), labels);
  ASSERT_GE(scores.genuine.size(), 300u);
  ASSERT_GE(scores.impostor.size(), 10000u);  // enough for FAR 1e-3 to mean a dozen impostor pairs

  for (double far : {1e-2, 1e-3}) {
    const Rates r = at_far(scores, far);
    std::printf("%s: TAR %.4f at FAR %.5f (target %g, threshold %.4f), %zu genuine / %zu impostor pairs\n",
                GetParam().label, r.tar, r.far, far, r.threshold, scores.genuine.size(), scores.impostor.size());
    EXPECT_LE(r.far, far);
    EXPECT_GE(r.tar, 0.95) << GetParam().label << ": TAR " << r.tar << " at FAR " << far << " (threshold "
                           << r.threshold << ")";
  }
  EXPECT_GE(area_under_roc(scores), 0.998) << GetParam().label;
  // A threshold the gallery could ship: the FAR 1e-3 one is well above the middle of the impostors.
  EXPECT_GT(at_far(scores, 1e-3).threshold, quantile(scores.impostor, 0.99)) << GetParam().label;
}

INSTANTIATE_TEST_SUITE_P(BothModels, RealVerification, ::testing::ValuesIn(kRealEmbedders),
                         [](const ::testing::TestParamInfo<RealEmbedder>& info) {
                           return std::string(info.param.dim == 128 ? "Foamliu128" : "Faceplugin512");
                         });

}  // namespace

int main(int argc, char** argv) {
  if (!fs::is_directory(realfaces_dir() / "photos") || !fs::is_directory(realfaces_dir() / "models")) {
    std::printf("no real faces at '%s' (../shared/realfaces): the real-face verification test is skipped\n",
                realfaces_dir().c_str());
    return 77;
  }
  if (!fs::is_regular_file(yunet_model())) {
    std::printf("no YuNet model at '%s': the real-face verification test is skipped\n", yunet_model().c_str());
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

// The two real ONNX face embedders of ../shared/realfaces (skipped, saying so, without it): they
// load with the descriptions docs/models.md gives (bench/realfaces/real_embedders.cpp), embed real
// photos through the product's own YuNet detection and 5-point alignment (tools/faces' YuNet
// finder, as `taconite-gallery enroll --detector`), batch like they embed one by one, and score
// two photos of one person above that person against strangers.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "image_file.hpp"
#include "onnx_test_files.hpp"
#include "real_embedders.hpp"
#include "taconite/model.hpp"
#include "yunet_face_finder.hpp"

namespace {

namespace fs = std::filesystem;
using namespace taconite::onnx_tests;

using taconite::realfaces::RealEmbedder;

class RealEmbedders : public ::testing::TestWithParam<RealEmbedder> {
 protected:
  void SetUp() override {
    root_ = realfaces_dir();
    dir_ = scratch_dir("real-" + std::to_string(GetParam().dim));
    auto loaded = taconite::realfaces::load_real_embedder(GetParam(), root_, dir_, 0);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    model_ = loaded.value();
    const taconite::Preprocessing p = model_->preprocessing();
    auto finder = taconite::faces::YuNetFaceFinder::load(
        (root_ / ".." / "models" / "face_detection_yunet_2023mar.onnx").string(),
        {p.width, p.height, taconite::vision::normalisation_of(p)});
    ASSERT_TRUE(finder.ok()) << finder.error().message;
    finder_ = std::move(finder).value();
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // The photo's largest face, YuNet-detected and aligned by its 5 points, normalised as the model says.
  std::vector<float> aligned_face(const std::string& relative) {
    auto bgr = taconite::faces::read_image((root_ / "photos" / relative).string());
    EXPECT_TRUE(bgr.ok()) << bgr.error().message;
    if (!bgr) return {};
    auto found = finder_->find(bgr.value());
    EXPECT_TRUE(found.ok() && !found.value().empty()) << relative << ": YuNet found no face";
    std::vector<float> chw;
    if (!found || found.value().empty()) return chw;
    auto aligned = finder_->model_input(0, chw);  // the largest face
    EXPECT_TRUE(aligned.ok()) << relative << ": " << aligned.error().message;
    return chw;
  }

  fs::path root_, dir_;
  std::shared_ptr<const taconite::Model> model_;
  std::unique_ptr<taconite::faces::YuNetFaceFinder> finder_;
};

TEST_P(RealEmbedders, TheSamePersonScoresAboveStrangersAndABatchEqualsSingleFaces) {
  EXPECT_EQ(model_->embed_dim(), GetParam().dim);
  EXPECT_EQ(model_->backend(), "opencv-dnn");
  // Both reshape to a fixed batch of one, yet a blob of N faces gives their N embeddings in order.
  EXPECT_TRUE(model_->diagnostics().empty()) << model_->diagnostics().front();
  auto session = taconite::Session::create(model_);
  ASSERT_TRUE(session.ok()) << session.error().message;
  // Two photos of each of three people, and three strangers.
  std::vector<std::vector<std::string>> photos;
  for (const char* person : {"elon_musk", "ben_affleck", "elton_john"}) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(root_ / "photos" / person)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    ASSERT_GE(names.size(), 2u) << person;
    photos.push_back({std::string(person) + "/" + names[0], std::string(person) + "/" + names[1]});
  }
  std::vector<std::string> strangers;
  for (const auto& entry : fs::directory_iterator(root_ / "photos" / "_impostors")) strangers.push_back(entry.path().filename().string());
  std::sort(strangers.begin(), strangers.end());
  strangers.resize(3);

  std::vector<std::vector<float>> inputs;
  std::vector<taconite::FaceChw> faces;
  const taconite::Preprocessing p = model_->preprocessing();
  for (const auto& pair : photos)
    for (const std::string& photo : pair) inputs.push_back(aligned_face(photo));
  for (const std::string& stranger : strangers) inputs.push_back(aligned_face("_impostors/" + stranger));
  for (const auto& input : inputs) {
    ASSERT_EQ(input.size(), 3u * p.width * p.height);
    faces.push_back({input, 3, p.height, p.width});
  }
  std::vector<taconite::Embedding> singles;
  for (const taconite::FaceChw& face : faces) {
    auto e = session.value().embed(face);
    ASSERT_TRUE(e.ok()) << e.error().message;
    singles.push_back(e.value());
  }
  auto batch = session.value().embed_batch(faces);
  ASSERT_TRUE(batch.ok()) << batch.error().message;
  ASSERT_EQ(batch.value().size(), singles.size());
  for (std::size_t i = 0; i < singles.size(); ++i)
    EXPECT_GT(taconite::cosine(batch.value()[i], singles[i]), 0.99999) << "batch face " << i;

  for (std::size_t person = 0; person < photos.size(); ++person) {
    const double genuine = taconite::cosine(singles[2 * person], singles[2 * person + 1]);
    for (std::size_t s = 0; s < strangers.size(); ++s) {
      const double impostor = taconite::cosine(singles[2 * person], singles[2 * photos.size() + s]);
      EXPECT_GT(genuine, impostor) << photos[person][0] << " vs " << photos[person][1] << " (" << genuine
                                   << ") against " << strangers[s] << " (" << impostor << ")";
    }
    for (std::size_t other = 0; other < photos.size(); ++other) {
      if (other == person) continue;
      EXPECT_GT(genuine, taconite::cosine(singles[2 * person], singles[2 * other]))
          << photos[person][0] << " against " << photos[other][0];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothModels, RealEmbedders,
                         ::testing::ValuesIn(taconite::realfaces::kRealEmbedders),
                         [](const ::testing::TestParamInfo<RealEmbedder>& info) {
                           return std::string(info.param.dim == 128 ? "Foamliu128" : "Faceplugin512");
                         });

}  // namespace

// Without the real faces the whole binary is skipped (exit 77: meson reports SKIP, not a pass).
int main(int argc, char** argv) {
  if (taconite::onnx_tests::realfaces_dir().empty()) {
    std::printf("no ../shared/realfaces in this checkout: the real-embedder tests are skipped\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

// The two real ONNX face embedders of ../shared/realfaces (skipped, saying so, without it): they
// load with the descriptions docs/models.md gives, embed real photos through the product's own
// YuNet detection and 5-point alignment, batch like they embed one by one, and score two photos of
// one person above that person against strangers.
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>
#include <string>
#include <vector>

#include "onnx_test_files.hpp"
#include "similarity_alignment.hpp"
#include "taconite/model.hpp"
#include "yunet_detector.hpp"

namespace {

namespace fs = std::filesystem;
using namespace taconite::onnx_tests;

// The descriptions of docs/models.md.
const char* kFoamliu = R"({"format": "taconite-embedder/1", "name": "mobilefacenet-foamliu",
 "input": {"name": "input0", "width": 112, "height": 112, "channel_order": "RGB",
           "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
 "output": {"name": "output0", "dim": 128}})";
const char* kFaceplugin = R"({"format": "taconite-embedder/1", "name": "mobilefacenet-faceplugin",
 "input": {"name": "input", "width": 112, "height": 112, "channel_order": "BGR",
           "mean": [0.498039, 0.498039, 0.498039], "std": [0.501961, 0.501961, 0.501961]},
 "output": {"name": "output", "dim": 512}})";

struct RealModel {
  const char* file;
  const char* description;
  int dim;
};

class RealEmbedders : public ::testing::TestWithParam<RealModel> {
 protected:
  void SetUp() override {
    root_ = realfaces_dir();
    if (root_.empty()) GTEST_SKIP() << "no ../shared/realfaces in this checkout: the real-embedder tests are skipped";
    dir_ = scratch_dir("real-" + std::to_string(GetParam().dim));
    const fs::path model = dir_ / GetParam().file;
    fs::create_symlink(root_ / "models" / GetParam().file, model);
    write_text(fs::path(model).replace_extension(".json"), GetParam().description);
    auto loaded = taconite::Model::load(model);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    model_ = loaded.value();
    auto detector = taconite::vision::YuNetDetector::load(
        (root_ / ".." / "models" / "face_detection_yunet_2023mar.onnx").string(), {});
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<taconite::vision::YuNetDetector>>(detector))
        << std::get<std::string>(detector);
    detector_ = std::move(std::get<std::unique_ptr<taconite::vision::YuNetDetector>>(detector));
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // The photo's largest face, YuNet-detected and aligned by its 5 points, normalised as the model says.
  std::vector<float> aligned_face(const std::string& relative) {
    const cv::Mat bgr = cv::imread((root_ / "photos" / relative).string(), cv::IMREAD_COLOR);
    EXPECT_FALSE(bgr.empty()) << relative;
    if (bgr.empty()) return {};
    std::vector<taconite::vision::DetectedFace> faces = detector_->detect(bgr);
    EXPECT_FALSE(faces.empty()) << relative << ": YuNet found no face";
    if (faces.empty()) return {};
    const auto largest = std::max_element(faces.begin(), faces.end(), [](const auto& a, const auto& b) {
      return a.box.area() < b.box.area();
    });
    std::array<taconite::vision::Point2, 5> five;
    for (int i = 0; i < 5; ++i) five[i] = {largest->landmarks[i].x, largest->landmarks[i].y};
    const taconite::Preprocessing p = model_->preprocessing();
    const auto to_template = taconite::vision::alignment_transform(five, p.width, p.height);
    EXPECT_TRUE(to_template.has_value()) << relative;
    taconite::vision::ImageView view;
    view.format = taconite::vision::PixelFormat::Bgr;
    view.width = bgr.cols;
    view.height = bgr.rows;
    view.planes[0] = bgr.data;
    view.strides[0] = static_cast<int>(bgr.step[0]);
    std::vector<float> chw;
    taconite::vision::aligned_face_to_chw(view, to_template.value_or(cv::Matx23d()), p.width, p.height,
                                          taconite::vision::normalisation_of(p), chw);
    return chw;
  }

  fs::path root_, dir_;
  std::shared_ptr<const taconite::Model> model_;
  std::unique_ptr<taconite::vision::YuNetDetector> detector_;
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
                         ::testing::Values(RealModel{"mobilefacenet_foamliu_opset10.onnx", kFoamliu, 128},
                                           RealModel{"fr_feature_faceplugin.onnx", kFaceplugin, 512}),
                         [](const ::testing::TestParamInfo<RealModel>& info) {
                           return std::string(info.param.dim == 128 ? "Foamliu128" : "Faceplugin512");
                         });

}  // namespace

// taconiteadaface with an ONNX face embedder (model=x.onnx, the opencv-dnn backend): the element
// feeds the network the planes, mean and std its description gives, `bundle` is an alias of
// `model`, `model-proc` picks another description, and a bundle backend refuses the file by name.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gst_test_support.hpp"
#include "taconite/model.hpp"

namespace {

using namespace gsttest;
namespace fs = std::filesystem;

std::array<std::uint8_t, 3> colourful(int x, int y) {
  return {static_cast<std::uint8_t>(40 + x * 9), static_cast<std::uint8_t>(200 - y * 7),
          static_cast<std::uint8_t>((x * y * 13) % 256)};
}

class OnnxElementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("TACONITE_TEST_ONNX_DIR");
    if (dir == nullptr || *dir == '\0') GTEST_SKIP() << "TACONITE_TEST_ONNX_DIR not set (meson test sets it)";
    dir_ = dir;
    ASSERT_TRUE(fs::exists(dir_ / "tiny.onnx")) << "build the onnx-test-models target";
  }

  // The element's embedding meta for one 20x16 RGB crop (the tiny model's input size).
  std::vector<float> element_embedding(const std::vector<std::pair<std::string, std::string>>& properties,
                                       std::string* model_name) {
    GstHarness* h = adaface_harness(properties);
    gst_harness_set_src_caps_str(h, "video/x-raw,format=RGB,width=20,height=16,framerate=30/1");
    GstBuffer* out = gst_harness_push_and_pull(h, rgb_buffer(20, 16, colourful));
    std::vector<float> e;
    if (GstTaconiteEmbeddingMeta* meta = out ? gst_buffer_get_taconite_embedding_meta(out) : nullptr) {
      e.assign(meta->embedding, meta->embedding + meta->dim);
      *model_name = meta->model;
      EXPECT_STREQ(meta->backend, "opencv-dnn");
      EXPECT_STREQ(meta->precision, "f32");
    }
    if (out) gst_buffer_unref(out);
    gst_harness_teardown(h);
    return e;
  }

  // The runtime's embedding of the same pixels, normalised here from the description's numbers
  // (BGR planes, ImageNet mean and std), independently of the element's preprocessing.
  std::vector<float> direct_embedding() {
    auto model = taconite::Model::load(dir_ / "tiny.onnx");
    EXPECT_TRUE(model.ok()) << model.error().message;
    if (!model) return {};
    const float mean[3] = {0.485f, 0.456f, 0.406f}, deviation[3] = {0.229f, 0.224f, 0.225f};
    std::vector<float> chw(3 * 16 * 20);
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 20; ++x)
        for (int c = 0; c < 3; ++c)  // plane c is B, G, R
          chw[(c * 16 + y) * 20 + x] = (colourful(x, y)[2 - c] / 255.0f - mean[c]) / deviation[c];
    auto session = taconite::Session::create(model.value());
    auto e = session.value().embed({chw, 3, 16, 20});
    EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
    return e ? e.value() : std::vector<float>{};
  }

  fs::path dir_;
};

TEST_F(OnnxElementTest, TheElementFeedsTheNetworkAsItsDescriptionSays) {
  std::string model_name;
  const std::vector<float> meta =
      element_embedding({{"model", (dir_ / "tiny.onnx").string()}, {"input-mode", "crops"}}, &model_name);
  const std::vector<float> direct = direct_embedding();
  ASSERT_EQ(meta.size(), 8u);
  ASSERT_EQ(direct.size(), 8u);
  EXPECT_EQ(model_name, "tiny-test-embedder");
  EXPECT_GE(taconite::cosine(meta, direct), 0.99999);
  // channel-order=rgb replaces only the order: another input, another embedding.
  const std::vector<float> rgb = element_embedding(
      {{"model", (dir_ / "tiny.onnx").string()}, {"input-mode", "crops"}, {"channel-order", "rgb"}}, &model_name);
  ASSERT_EQ(rgb.size(), 8u);
  EXPECT_LT(taconite::cosine(rgb, direct), 0.9999);
}

TEST_F(OnnxElementTest, BundleIsAnAliasOfModelAndModelProcPicksTheDescription) {
  GstElement* element = gst_element_factory_make("taconiteadaface", nullptr);
  ASSERT_NE(element, nullptr);
  g_object_set(element, "bundle", (dir_ / "tiny.onnx").c_str(), nullptr);
  gchar* model = nullptr;
  g_object_get(element, "model", &model, nullptr);
  EXPECT_STREQ(model, (dir_ / "tiny.onnx").c_str());
  g_free(model);
  gst_object_unref(element);

  const fs::path proc = fs::temp_directory_path() / ("taconite-onnx-element-" + std::to_string(::getpid()) + ".json");
  std::ifstream in(dir_ / "tiny.json");
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  text.replace(text.find("tiny-test-embedder"), 18, "described-elsewhere");
  std::ofstream(proc) << text;
  std::string model_name;
  const std::vector<float> e = element_embedding(
      {{"bundle", (dir_ / "tiny.onnx").string()}, {"model-proc", proc.string()}, {"input-mode", "crops"}}, &model_name);
  EXPECT_EQ(e.size(), 8u);
  EXPECT_EQ(model_name, "described-elsewhere");
  fs::remove(proc);
}

TEST_F(OnnxElementTest, ABundleBackendRefusesTheOnnxFileByName) {
  GstElement* element = gst_element_factory_make("taconiteadaface", nullptr);
  ASSERT_NE(element, nullptr);
  g_object_set(element, "model", (dir_ / "tiny.onnx").c_str(), nullptr);
  gst_util_set_object_arg(G_OBJECT(element), "backend", "cpu-reference");
  const StartFailure f = start_paused(element);
  EXPECT_EQ(f.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(f.message.find("tiny.onnx"), std::string::npos) << f.message;
  EXPECT_NE(f.debug.find("cannot run the ONNX file"), std::string::npos) << f.debug;
  EXPECT_NE(f.debug.find("opencv-dnn"), std::string::npos) << f.debug;
}

TEST_F(OnnxElementTest, AMalformedDescriptionIsAnErrorNamingItsField) {
  const fs::path dir = fs::temp_directory_path() / ("taconite-onnx-element-bad-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(dir_ / "tiny.onnx", dir / "tiny.onnx", fs::copy_options::overwrite_existing);
  std::ofstream(dir / "tiny.json") << R"({"format": "taconite-embedder/1", "name": "x", "input": {"name": "face"}})";
  GstElement* element = gst_element_factory_make("taconiteadaface", nullptr);
  ASSERT_NE(element, nullptr);
  g_object_set(element, "model", (dir / "tiny.onnx").c_str(), nullptr);
  const StartFailure f = start_paused(element);
  EXPECT_EQ(f.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(f.debug.find("tiny.json: input.width: missing"), std::string::npos) << f.debug;
  fs::remove_all(dir);
}

}  // namespace

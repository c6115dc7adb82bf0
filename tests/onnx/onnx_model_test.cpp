// taconite::Model / Session on ONNX face embedders (the opencv-dnn backend): the tiny generated
// models checked against a numpy reference, every defect a load or an embed must name, the backend
// rules, and the real embedders of ../shared/realfaces when present.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <opencv2/core.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bundle_fixture.hpp"
#include "onnx_test_files.hpp"
#include "taconite/inspect.hpp"
#include "taconite/model.hpp"

namespace {

namespace fs = std::filesystem;
using taconite::ErrorKind;
using taconite::FaceChw;
using taconite::LoadOptions;
using taconite::Model;
using taconite::Session;
using namespace taconite::onnx_tests;

constexpr int kHeight = 16, kWidth = 20, kDim = 8;
constexpr std::size_t kFaceValues = 3 * kHeight * kWidth;

class TinyOnnx : public ::testing::Test {
 protected:
  void SetUp() override {
    if (tiny_dir().empty()) GTEST_FAIL() << "TACONITE_TEST_ONNX_DIR is not set (run through meson test)";
    faces_ = read_floats(tiny_dir() / "reference_faces.f32");
    reference_ = read_floats(tiny_dir() / "reference_embeddings.f32");
    ASSERT_EQ(faces_.size(), 3 * kFaceValues);
    ASSERT_EQ(reference_.size(), 3u * kDim);
  }

  FaceChw face(int i) const { return {std::span<const float>(faces_).subspan(i * kFaceValues, kFaceValues), 3, kHeight, kWidth}; }

  static taconite::Result<std::shared_ptr<const Model>> load(const fs::path& model, LoadOptions options = {}) {
    return Model::load(model, options);
  }

  // The load's error, which must be of `kind`.
  static std::string load_error(const fs::path& model, ErrorKind kind, LoadOptions options = {}) {
    auto loaded = Model::load(model, options);
    if (loaded.ok()) return "(loaded)";
    EXPECT_EQ(loaded.error().kind, kind) << loaded.error().message;
    return loaded.error().message;
  }

  // A copy of tiny.onnx in a scratch directory, with tiny.json edited by `edit`.
  fs::path tiny_with_description(const std::string& name, const std::string& from, const std::string& to) {
    const fs::path dir = scratch_dir(name);
    fs::copy_file(tiny_dir() / "tiny.onnx", dir / "tiny.onnx");
    write_text(dir / "tiny.json", replaced(read_text(tiny_dir() / "tiny.json"), from, to));
    scratch_.push_back(dir);
    return dir / "tiny.onnx";
  }

  void TearDown() override {
    for (const fs::path& dir : scratch_) fs::remove_all(dir);
  }

  std::vector<float> faces_, reference_;
  std::vector<fs::path> scratch_;
};

void expect_close(const std::vector<float>& got, std::span<const float> want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-4 * (1.0 + std::abs(want[i]))) << what << " value " << i;
}

TEST_F(TinyOnnx, LoadsWithTheDescriptionBesideItAndReportsIt) {
  auto model = load(tiny_dir() / "tiny.onnx");
  ASSERT_TRUE(model.ok()) << model.error().message;
  const Model& m = *model.value();
  EXPECT_EQ(m.backend(), "opencv-dnn");
  EXPECT_NE(m.backend_reason().find("auto: opencv-dnn"), std::string::npos) << m.backend_reason();
  EXPECT_EQ(m.precision(), "f32");
  EXPECT_EQ(m.name(), "tiny-test-embedder");
  EXPECT_EQ(m.embed_dim(), kDim);
  EXPECT_EQ(m.input_dims().channels, 3);
  EXPECT_EQ(m.input_dims().height, kHeight);
  EXPECT_EQ(m.input_dims().width, kWidth);
  const taconite::Preprocessing p = m.preprocessing();
  EXPECT_EQ(p.width, kWidth);
  EXPECT_EQ(p.height, kHeight);
  EXPECT_EQ(p.channel_order, taconite::PlaneOrder::Bgr);
  EXPECT_FLOAT_EQ(p.mean[1], 0.456f);
  EXPECT_FLOAT_EQ(p.std_dev[2], 0.225f);
  ASSERT_TRUE(m.recommended_threshold().has_value());
  EXPECT_DOUBLE_EQ(*m.recommended_threshold(), 0.42);
  EXPECT_TRUE(m.diagnostics().empty()) << m.diagnostics().front();  // it batches
  EXPECT_EQ(taconite::inspect::conv_dispatches(m), 0);
  EXPECT_EQ(taconite::inspect::padded_input_dims(m).channels, 3);
  // A requested opencv-dnn says so.
  LoadOptions requested;
  requested.backend = "opencv-dnn";
  auto explicit_backend = load(tiny_dir() / "tiny.onnx", requested);
  ASSERT_TRUE(explicit_backend.ok()) << explicit_backend.error().message;
  EXPECT_EQ(explicit_backend.value()->backend_reason(), "requested; precision f32");
}

TEST_F(TinyOnnx, EmbedsWhatTheNumpyReferenceComputesOneByOneAndInOneBatch) {
  auto model = load(tiny_dir() / "tiny.onnx");
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto session = Session::create(model.value());
  ASSERT_TRUE(session.ok()) << session.error().message;
  std::vector<std::vector<float>> singles;
  for (int i = 0; i < 3; ++i) {
    auto e = session.value().embed(face(i));
    ASSERT_TRUE(e.ok()) << e.error().message;
    expect_close(e.value(), std::span<const float>(reference_).subspan(i * kDim, kDim), "face " + std::to_string(i));
    singles.push_back(e.value());
  }
  const std::vector<FaceChw> batch = {face(0), face(1), face(2)};
  auto batched = session.value().embed_batch(batch);
  ASSERT_TRUE(batched.ok()) << batched.error().message;
  ASSERT_EQ(batched.value().size(), 3u);
  for (int i = 0; i < 3; ++i) expect_close(batched.value()[i], singles[i], "batch face " + std::to_string(i));
  EXPECT_TRUE(session.value().embed_batch({}).value().empty());
}

TEST_F(TinyOnnx, SessionsOfOneModelRunConcurrently) {
  auto model = load(tiny_dir() / "tiny.onnx");
  ASSERT_TRUE(model.ok()) << model.error().message;
  std::vector<std::vector<float>> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      auto session = Session::create(model.value());
      for (int round = 0; round < 20 && session.ok(); ++round) {
        auto e = session.value().embed(face(t % 3));
        if (e.ok()) results[t] = e.value();
      }
    });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 4; ++t)
    expect_close(results[t], std::span<const float>(reference_).subspan((t % 3) * kDim, kDim), "thread " + std::to_string(t));
}

TEST_F(TinyOnnx, AnExplicitDescriptionReplacesTheOneBesideTheModel) {
  const fs::path dir = scratch_dir("explicit-description");
  scratch_.push_back(dir);
  write_text(dir / "other.json", replaced(read_text(tiny_dir() / "tiny.json"), "tiny-test-embedder", "renamed-embedder"));
  LoadOptions options;
  options.model_proc = dir / "other.json";
  auto model = load(tiny_dir() / "tiny.onnx", options);
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(model.value()->name(), "renamed-embedder");
  options.model_proc = dir / "absent.json";
  const std::string missing = load_error(tiny_dir() / "tiny.onnx", ErrorKind::Io, options);
  EXPECT_NE(missing.find("absent.json: does not exist"), std::string::npos) << missing;
}

TEST_F(TinyOnnx, OnlyOpencvDnnRunsAnOnnxFileAndItRunsNothingElse) {
  const auto backends = taconite::compiled_backends();
  EXPECT_NE(std::find(backends.begin(), backends.end(), "opencv-dnn"), backends.end());
  for (const char* bundle_backend : {"cpu", "cpu-reference"}) {
    LoadOptions options;
    options.backend = bundle_backend;
    const std::string error = load_error(tiny_dir() / "tiny.onnx", ErrorKind::Input, options);
    EXPECT_NE(error.find("cannot run the ONNX file"), std::string::npos) << error;
    EXPECT_NE(error.find("tiny.onnx"), std::string::npos) << error;
    EXPECT_NE(error.find("opencv-dnn"), std::string::npos) << error;
  }
  LoadOptions unknown;
  unknown.backend = "tensorrt";
  EXPECT_NE(load_error(tiny_dir() / "tiny.onnx", ErrorKind::Device, unknown).find("'tensorrt' is unknown"),
            std::string::npos);

  const taconite::testing::BundleFixture bundle;
  LoadOptions dnn;
  dnn.backend = "opencv-dnn";
  const std::string on_bundle = load_error(bundle.dir(), ErrorKind::Input, dnn);
  EXPECT_NE(on_bundle.find("opencv-dnn' runs ONNX files, not bundles"), std::string::npos) << on_bundle;
  LoadOptions described;
  described.model_proc = tiny_dir() / "tiny.json";
  const std::string proc_for_bundle = load_error(bundle.dir(), ErrorKind::Input, described);
  EXPECT_NE(proc_for_bundle.find("tiny.json) is for an ONNX model"), std::string::npos) << proc_for_bundle;
  // A bundle keeps its own normalisation: cvlface's 0.5 / 0.5, its channel order.
  auto loaded = Model::load(bundle.dir());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const taconite::Preprocessing p = loaded.value()->preprocessing();
  EXPECT_EQ(p.channel_order, taconite::PlaneOrder::Rgb);
  EXPECT_FLOAT_EQ(p.mean[0], 0.5f);
  EXPECT_FLOAT_EQ(p.std_dev[2], 0.5f);
  EXPECT_EQ(p.width, loaded.value()->input_dims().width);
  EXPECT_FALSE(loaded.value()->recommended_threshold().has_value());
}

TEST_F(TinyOnnx, ANetworkThatDoesNotFitItsDescriptionIsRefusedNamingTheFileAndTheShape) {
  struct Case {
    const char* model;
    const char* expected;
  };
  for (const Case& c : {
           Case{"wrong_size", "wrong_size.onnx: input 'face' is 1x3x20x20; expected 1x3x16x20"},
           Case{"one_channel", "one_channel.onnx: input 'face' is 1x1x16x20; expected 1x3x16x20"},
           Case{"batch_two", "batch_two.onnx: input 'face' is 2x3x16x20; expected 1x3x16x20"},
           Case{"map_output", "map_output.onnx: output 'embedding' is 1x4x8x10; expected 1xD"},
       }) {
    const std::string error = load_error(tiny_dir() / (std::string(c.model) + ".onnx"), ErrorKind::Bundle);
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.model << ": " << error;
  }
  const std::string dim = load_error(tiny_with_description("dim", "\"dim\": 8", "\"dim\": 16"), ErrorKind::Bundle);
  EXPECT_NE(dim.find("output 'embedding' is 1x8, but"), std::string::npos) << dim;
  EXPECT_NE(dim.find("tiny.json output.dim is 16"), std::string::npos) << dim;
  const std::string input = load_error(tiny_with_description("input-name", "\"face\"", "\"input0\""), ErrorKind::Bundle);
  EXPECT_NE(input.find("has no input 'input0'"), std::string::npos) << input;
  EXPECT_NE(input.find("its input: 'face'"), std::string::npos) << input;
  const std::string output =
      load_error(tiny_with_description("output-name", "\"embedding\"", "\"output0\""), ErrorKind::Bundle);
  EXPECT_NE(output.find("has no output 'output0'"), std::string::npos) << output;
  const std::string size = load_error(tiny_with_description("size", "\"height\": 16", "\"height\": 32"), ErrorKind::Bundle);
  EXPECT_NE(size.find("input 'face' is 1x3x16x20; expected 1x3x32x20"), std::string::npos) << size;
  const std::string field = load_error(tiny_with_description("field", "\"BGR\"", "\"YUV\""), ErrorKind::Bundle);
  EXPECT_NE(field.find("tiny.json: input.channel_order: expected \"RGB\" or \"BGR\", got \"YUV\""), std::string::npos)
      << field;
}

TEST_F(TinyOnnx, AFileThatIsNotAnOnnxModelOrNotThereIsRefusedByName) {
  const fs::path dir = scratch_dir("not-onnx");
  scratch_.push_back(dir);
  write_text(dir / "garbage.onnx", "this is not a protobuf");
  fs::copy_file(tiny_dir() / "tiny.json", dir / "garbage.json");
  const std::string garbage = load_error(dir / "garbage.onnx", ErrorKind::Bundle);
  EXPECT_NE(garbage.find("garbage.onnx: not an ONNX model OpenCV DNN can read"), std::string::npos) << garbage;
  const std::string missing = load_error(dir / "absent.onnx", ErrorKind::Io);
  EXPECT_NE(missing.find("absent.onnx: does not exist"), std::string::npos) << missing;
  fs::copy_file(tiny_dir() / "tiny.onnx", dir / "undescribed.onnx");
  const std::string undescribed = load_error(dir / "undescribed.onnx", ErrorKind::Io);
  EXPECT_NE(undescribed.find("undescribed.json: does not exist"), std::string::npos) << undescribed;
  ASSERT_EQ(::mkfifo((dir / "fifo.onnx").c_str(), 0600), 0);
  const std::string fifo = load_error(dir / "fifo.onnx", ErrorKind::Io);
  EXPECT_NE(fifo.find("fifo.onnx: is a FIFO"), std::string::npos) << fifo;
}

TEST_F(TinyOnnx, AFaceOfTheWrongShapeOrNotFiniteAndANanOutputAreErrors) {
  auto model = load(tiny_dir() / "tiny.onnx");
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto session = Session::create(model.value());
  ASSERT_TRUE(session.ok());
  const std::vector<float> wrong(3 * 112 * 112, 0.0f);
  auto sized = session.value().embed({wrong, 3, 112, 112});
  ASSERT_FALSE(sized.ok());
  EXPECT_EQ(sized.error().kind, ErrorKind::Input);
  EXPECT_NE(sized.error().message.find("the model expects 3x16x20"), std::string::npos) << sized.error().message;
  std::vector<float> nan_face(faces_.begin(), faces_.begin() + kFaceValues);
  nan_face[5] = NAN;
  auto nan_input = session.value().embed({nan_face, 3, kHeight, kWidth});
  ASSERT_FALSE(nan_input.ok());
  EXPECT_EQ(nan_input.error().kind, ErrorKind::Input);
  EXPECT_NE(nan_input.error().message.find("value 5 is not finite"), std::string::npos) << nan_input.error().message;

  auto nan_model = load(tiny_dir() / "nan_output.onnx");
  ASSERT_TRUE(nan_model.ok()) << nan_model.error().message;
  auto nan_session = Session::create(nan_model.value());
  ASSERT_TRUE(nan_session.ok());
  auto nan_output = nan_session.value().embed(face(0));
  ASSERT_FALSE(nan_output.ok());
  EXPECT_EQ(nan_output.error().kind, ErrorKind::Device);
  EXPECT_NE(nan_output.error().message.find("nan_output.onnx: the network's output 'embedding' for face 0 is not finite"),
            std::string::npos)
      << nan_output.error().message;
}

TEST_F(TinyOnnx, OpencvThreadsFollowTheLoadOptions) {
  for (int threads : {1, 2}) {
    LoadOptions options;
    options.threads = threads;
    auto model = load(tiny_dir() / "tiny.onnx", options);
    ASSERT_TRUE(model.ok()) << model.error().message;
    EXPECT_EQ(cv::getNumThreads(), threads);
  }
}

}  // namespace

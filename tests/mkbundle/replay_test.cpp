// The targets of issue 2 on bundles written by the writer, replayed through the public API on
// the cpu-reference backend: replay vs ref.npu_embedding, embed() of ref.input_chw vs replay
// (bit-identical), replay vs the independent f32 reference, and O(1) activations.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "taconite/embedder.hpp"
#include "taconite/inspect.hpp"
#include "test_bundles.hpp"

namespace taconite::mkbundle {
namespace {

using testing::written_bundle;

struct Case {
  ModelKind model;
  Grouping grouping;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = model_param_name(info.param.model) + "_" + to_string(info.param.grouping);
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

double rms(const std::vector<float>& v) {
  double s = 0.0;
  for (float x : v) s += static_cast<double>(x) * x;
  return std::sqrt(s / static_cast<double>(v.size()));
}

IrEmbedder load_cpu_reference(const std::filesystem::path& dir) {
  LoadOptions options;
  options.backend = std::string(kBackendCpuReference);
  Result<IrEmbedder> loaded = IrEmbedder::load(dir, options);
  if (!loaded) throw std::runtime_error(loaded.error().message);
  return std::move(loaded).value();
}

void expect_targets(const testing::WrittenBundle& w, ModelKind model) {
  IrEmbedder embedder = load_cpu_reference(w.dir);
  EXPECT_EQ(embedder.model(), model_param_name(model));
  EXPECT_EQ(embedder.embed_dim(), 512);
  EXPECT_EQ(inspect::conv_dispatches(embedder), w.report.conv_records);
  EXPECT_TRUE(embedder.diagnostics().empty()) << embedder.diagnostics().front();

  Result<Embedding> replay = inspect::embed_recorded(embedder);
  ASSERT_TRUE(replay) << replay.error().message;
  const std::vector<float> npu = inspect::reference_f32(embedder, "ref.npu_embedding");
  ASSERT_EQ(npu.size(), 512u);
  EXPECT_GE(cosine(replay.value(), npu), 0.99999);

  const std::vector<float> chw = inspect::reference_f32(embedder, "ref.input_chw");
  ASSERT_EQ(chw.size(), 3u * 112 * 112);
  Result<Embedding> api = embedder.embed(FaceChw{chw, 3, 112, 112});
  ASSERT_TRUE(api) << api.error().message;
  ASSERT_EQ(api.value().size(), replay.value().size());
  EXPECT_EQ(std::memcmp(api.value().data(), replay.value().data(), sizeof(float) * api.value().size()), 0)
      << "embed(ref.input_chw) is not bit-identical to the replay of ref.input";

  const std::vector<float> cpu = inspect::reference_f32(embedder, "ref.cpu_embedding");
  ASSERT_EQ(cpu.size(), 512u);
  EXPECT_GE(cosine(replay.value(), cpu), 0.999);

  // Calibrated: a BN1d-normalised embedding has per-feature spread ~1.
  const double r = rms(replay.value());
  EXPECT_GT(r, 0.3);
  EXPECT_LT(r, 3.0);
}

class WrittenBundleReplay : public ::testing::TestWithParam<Case> {};

TEST_P(WrittenBundleReplay, MeetsTheCosineTargets) {
  expect_targets(written_bundle(GetParam().model, GetParam().grouping), GetParam().model);
}

TEST_P(WrittenBundleReplay, ActivationsStayOrderOneAtEveryDepth) {
  const MakeReport& r = written_bundle(GetParam().model, GetParam().grouping).report;
  const ActivationTrace& t = r.reference_trace;
  ASSERT_EQ(t.unit_rms.size(), r.model == "IR-18" ? 8u : 4u);
  EXPECT_GT(t.stem_rms, 0.1);
  EXPECT_LT(t.stem_rms, 10.0);
  for (std::size_t u = 0; u < t.unit_rms.size(); ++u) {
    EXPECT_GT(t.unit_rms[u], 0.1) << "unit " << u;
    EXPECT_LT(t.unit_rms[u], 10.0) << "unit " << u;
  }
  EXPECT_GT(t.head_input_rms, 0.1);
  EXPECT_LT(t.head_input_rms, 10.0);
  EXPECT_GT(t.embedding_rms, 0.3);
  EXPECT_LT(t.embedding_rms, 3.0);
}

TEST_P(WrittenBundleReplay, ReportAgreesWithTheBundle) {
  const MakeReport& r = written_bundle(GetParam().model, GetParam().grouping).report;
  EXPECT_TRUE(r.embed_api_bit_identical);
  EXPECT_GE(r.cos_recorder, 0.99999);
  EXPECT_GE(r.cos_cpu_reference, 0.999);
  EXPECT_TRUE(r.diagnostics.empty());
  EXPECT_GE(r.conv_records, r.convs);
}

INSTANTIATE_TEST_SUITE_P(Models, WrittenBundleReplay,
                         ::testing::Values(Case{ModelKind::IrTiny, Grouping::Tile}, Case{ModelKind::IrTiny, Grouping::Whole},
                                           Case{ModelKind::IrTiny, Grouping::Fixed64}, Case{ModelKind::Ir18, Grouping::Tile},
                                           Case{ModelKind::Ir18, Grouping::Uneven}),
                         case_name);

// IR-101 (12 G MACs in f32 plus two replays): only in the `slow` suite.
TEST(SlowIr101, MeetsTheCosineTargets) {
  const testing::WrittenBundle& w = written_bundle(ModelKind::Ir101, Grouping::Tile, 4);
  expect_targets(w, ModelKind::Ir101);
  const ActivationTrace& t = w.report.reference_trace;
  ASSERT_EQ(t.unit_rms.size(), 49u);
  for (std::size_t u = 0; u < t.unit_rms.size(); ++u) {
    EXPECT_GT(t.unit_rms[u], 0.1) << "unit " << u;
    EXPECT_LT(t.unit_rms[u], 10.0) << "unit " << u;
  }
}

}  // namespace
}  // namespace taconite::mkbundle

// The `cpu` backend against the exact replay (cpu-reference) and the bundle's fp32 PyTorch-style
// reference (ref.cpu_embedding), single faces and batches, on IR-tiny (three groupings) and IR-18.
#include <omp.h>

#include <algorithm>
#include <optional>
#include <gtest/gtest.h>

#include "bundle/bundle.hpp"
#include "bundle_cache.hpp"
#include "common/failure.hpp"
#include "cpu/cpu_executor.hpp"
#include "plan/plan.hpp"
#include "taconite/embedder.hpp"
#include "taconite/inspect.hpp"

namespace taconite::cpu_test {
namespace {

struct BundleCase {
  std::string model, grouping;
};

std::string case_name(const testing::TestParamInfo<BundleCase>& info) {
  std::string name = info.param.model + "_" + info.param.grouping;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

std::optional<IrEmbedder> load(const std::filesystem::path& dir, std::string backend, Precision precision = Precision::Auto,
                               int threads = 0) {
  LoadOptions options;
  options.backend = std::move(backend);
  options.precision = precision;
  options.threads = threads;
  Result<IrEmbedder> loaded = IrEmbedder::load(dir, options);
  if (!loaded) {
    ADD_FAILURE() << loaded.error().message;
    return std::nullopt;
  }
  return std::move(loaded).value();
}

// The value of a Result, or a recorded failure and an empty value.
template <typename T>
T must(Result<T> result) {
  if (!result) {
    ADD_FAILURE() << result.error().message;
    return T{};
  }
  return std::move(result).value();
}

// Variations of the bundle's recorded face, so a batch holds different inputs.
std::vector<std::vector<float>> faces_from(const IrEmbedder& embedder, int count) {
  const std::vector<float> base = inspect::reference_f32(embedder, "ref.input_chw");
  std::vector<std::vector<float>> faces;
  for (int k = 0; k < count; ++k) {
    std::vector<float> face = base;
    for (std::size_t i = 0; i < face.size(); ++i) {
      const float wave = static_cast<float>(((i * 7 + static_cast<std::size_t>(k) * 13) % 29)) / 29.0f - 0.5f;
      face[i] = std::clamp(face[i] * (1.0f - 0.1f * k) + 0.05f * k * wave, -1.0f, 1.0f);
    }
    faces.push_back(std::move(face));
  }
  return faces;
}

FaceChw face_view(const std::vector<float>& data) { return FaceChw{data, 3, 112, 112}; }

class CpuAccuracy : public testing::TestWithParam<BundleCase> {
 protected:
  void SetUp() override {
    dir_ = test_bundle(GetParam().model, GetParam().grouping);
    ASSERT_FALSE(dir_.empty());
  }
  std::filesystem::path dir_;
};

TEST_P(CpuAccuracy, MatchesExactReplayAndFp32ReferenceInF32) {
  std::optional<IrEmbedder> cpu = load(dir_, "cpu", Precision::F32);
  ASSERT_TRUE(cpu);
  std::optional<IrEmbedder> exact = load(dir_, "cpu-reference");
  ASSERT_TRUE(exact);
  ASSERT_EQ(cpu->backend(), "cpu");
  const Embedding fast = must(inspect::embed_recorded(*cpu));
  const Embedding replay = must(inspect::embed_recorded(*exact));
  const std::vector<float> fp32 = inspect::reference_f32(*cpu, "ref.cpu_embedding");
  ASSERT_EQ(fp32.size(), fast.size()) << "mkbundle writes ref.cpu_embedding";
  EXPECT_GE(cosine(fast, replay), 0.9999);
  EXPECT_GE(cosine(fast, fp32), 0.9999);

  // The caller's path (bf16 rounding, channel padding, tiling) through the fused network.
  const std::vector<float> face = inspect::reference_f32(*cpu, "ref.input_chw");
  ASSERT_FALSE(face.empty());
  EXPECT_GE(cosine(must(cpu->embed(face_view(face))), must(exact->embed(face_view(face)))), 0.9999);
}

// Precision::Bf16 (LoadOptions) runs only where oneDNN has bf16 kernels (AVX512-BF16 / AMX, or
// AVX512 emulation); elsewhere the load is a Device error naming the ISA.
TEST_P(CpuAccuracy, MatchesExactReplayAndFp32ReferenceInBf16) {
  LoadOptions options;
  options.backend = "cpu";
  options.precision = Precision::Bf16;
  options.threads = 2;
  Result<IrEmbedder> bf16 = IrEmbedder::load(dir_, options);
  if (!bf16) {
    EXPECT_EQ(bf16.error().kind, ErrorKind::Device);
    EXPECT_NE(bf16.error().message.find("isa " + cpu::cpu_isa_name()), std::string::npos) << bf16.error().message;
    GTEST_SKIP() << "bf16 path NOT exercised on this CPU (oneDNN isa " << cpu::cpu_isa_name()
                 << "): " << bf16.error().message;
  }
  ASSERT_EQ(bf16.value().precision(), kPrecisionBf16);
  std::optional<IrEmbedder> exact = load(dir_, "cpu-reference");
  ASSERT_TRUE(exact);
  const Embedding fast = must(inspect::embed_recorded(bf16.value()));
  EXPECT_GE(cosine(fast, must(inspect::embed_recorded(*exact))), 0.9999);
  EXPECT_GE(cosine(fast, inspect::reference_f32(*exact, "ref.cpu_embedding")), 0.9999);
}

TEST_P(CpuAccuracy, BatchEqualsOneByOne) {
  std::optional<IrEmbedder> cpu = load(dir_, "cpu");
  ASSERT_TRUE(cpu);
  const std::vector<std::vector<float>> faces = faces_from(*cpu, 3);
  std::vector<FaceChw> views;
  for (const auto& face : faces) views.push_back(face_view(face));
  const std::vector<Embedding> batch = must(cpu->embed_batch(views));
  ASSERT_EQ(batch.size(), faces.size());
  for (std::size_t k = 0; k < faces.size(); ++k) {
    const Embedding single = must(cpu->embed(views[k]));
    EXPECT_GE(cosine(batch[k], single), 0.99999) << "face " << k;
  }
  EXPECT_NE(batch[0], batch[1]) << "the faces of a batch must give different embeddings";
}

INSTANTIATE_TEST_SUITE_P(Bundles, CpuAccuracy,
                         testing::Values(BundleCase{"ir-tiny", "tile"},
                                         BundleCase{"ir-tiny", "fixed64"}, BundleCase{"ir18", "fixed64"}),
                         case_name);

// IR-101 (suite `slow`: mkbundle takes ~1 min to write it): 49 folded affines deep, both
// candidates of `precision = auto` against the fp32 reference, both within 0.9999. bf16 meets it
// only because the residual stream stays f32 (rounded to bf16 at every unit it measured 0.99986,
// like the bf16-exact replay's 0.99980): the test fails if that stream is rounded again.
TEST(SlowCpuAccuracy, Ir101BothCandidatesMatchTheFp32Reference) {
  const std::filesystem::path dir = test_bundle("ir101");
  ASSERT_FALSE(dir.empty());
  std::optional<IrEmbedder> f32 = load(dir, "cpu", Precision::F32, 2);
  ASSERT_TRUE(f32);
  const std::vector<float> fp32 = inspect::reference_f32(*f32, "ref.cpu_embedding");
  EXPECT_GE(cosine(must(inspect::embed_recorded(*f32)), fp32), 0.9999);
  LoadOptions options;
  options.backend = "cpu";
  options.precision = Precision::Bf16;
  options.threads = 2;
  Result<IrEmbedder> bf16 = IrEmbedder::load(dir, options);
  if (!bf16) GTEST_SKIP() << "bf16 path NOT exercised on this CPU: " << bf16.error().message;
  EXPECT_GE(cosine(must(inspect::embed_recorded(bf16.value())), fp32), 0.9999);
}

// More faces than one pass takes (8): several passes, every face still in its place.
TEST(CpuBatching, LargeBatchRunsInPassesInOrder) {
  const std::filesystem::path dir = test_bundle("ir-tiny");
  ASSERT_FALSE(dir.empty());
  std::optional<IrEmbedder> cpu = load(dir, "cpu");
  ASSERT_TRUE(cpu);
  const std::vector<std::vector<float>> faces = faces_from(*cpu, 19);
  std::vector<FaceChw> views;
  for (const auto& face : faces) views.push_back(face_view(face));
  const std::vector<Embedding> batch = must(cpu->embed_batch(views));
  ASSERT_EQ(batch.size(), faces.size());
  for (std::size_t k = 0; k < faces.size(); k += 9)
    EXPECT_GE(cosine(batch[k], must(cpu->embed(views[k]))), 0.99999) << "face " << k;
  EXPECT_GE(cosine(batch.back(), must(cpu->embed(views.back()))), 0.99999);
}

TEST(CpuThreads, ThreadCountsAgreeAndTheCallersOpenMpSettingIsKept) {
  const std::filesystem::path dir = test_bundle("ir-tiny");
  ASSERT_FALSE(dir.empty());
  omp_set_num_threads(1);
  std::optional<IrEmbedder> one = load(dir, "cpu", Precision::Auto, 1);
  ASSERT_TRUE(one);
  std::optional<IrEmbedder> two = load(dir, "cpu", Precision::Auto, 2);
  ASSERT_TRUE(two);
  const Embedding a = must(inspect::embed_recorded(*one));
  const Embedding b = must(inspect::embed_recorded(*two));
  EXPECT_GE(cosine(a, b), 0.99999);
  EXPECT_EQ(omp_get_max_threads(), 1) << "the runtime must restore the caller's OpenMP thread count";
}

// Which numerics `auto` picks is a measurement (cpu/numerics_choice.hpp; the decision itself is
// tested on injected timings in numerics_choice_test.cpp): here, that it says what it measured,
// and that an explicit precision runs without a race.
TEST(CpuPrecision, AutoSaysWhatItMeasuredAndAnExplicitPrecisionSkipsTheRace) {
  const std::filesystem::path dir = test_bundle("ir-tiny");
  ASSERT_FALSE(dir.empty());
  const bundle::Bundle bundle = bundle::Bundle::open(dir);
  const plan::Plan plan = plan::build_plan(bundle);
  const auto forced = cpu::make_cpu_backend(*cpu::lower_plan(plan).graph, {cpu::CpuOptions::Precision::F32, 1});
  EXPECT_EQ(forced->compute_type(), cpu::ComputeType::F32);
  EXPECT_EQ(forced->precision_reason(), "");
  const auto automatic = cpu::make_cpu_backend(*cpu::lower_plan(plan).graph, {cpu::CpuOptions::Precision::Auto, 1});
  const std::string reason = automatic->precision_reason();
  EXPECT_EQ(reason.rfind("auto: " + automatic->precision(), 0), 0u) << reason;  // "f32-winograd" is f32
  EXPECT_NE(automatic->summary().find(reason), std::string::npos) << automatic->summary();
  LoadOptions bf16_options;
  bf16_options.backend = "cpu";
  bf16_options.precision = Precision::Bf16;
  if (IrEmbedder::load(dir, bf16_options)) {
    EXPECT_NE(reason.find("interleaved rounds: f32 "), std::string::npos) << reason;
    EXPECT_NE(reason.find(", bf16 "), std::string::npos) << reason;
  } else {
    EXPECT_EQ(automatic->compute_type(), cpu::ComputeType::F32);
    EXPECT_NE(reason.find("bf16: "), std::string::npos) << reason;  // left out, saying why
  }
}

TEST(CpuPrecision, BackendReasonCarriesTheChoiceAndEndsWithThePrecision) {
  const std::filesystem::path dir = test_bundle("ir-tiny");
  ASSERT_FALSE(dir.empty());
  std::optional<IrEmbedder> automatic = load(dir, "cpu");
  ASSERT_TRUE(automatic);
  const std::string reason = automatic->backend_reason();
  EXPECT_NE(reason.find("; auto: " + automatic->precision()), std::string::npos) << reason;
  const std::string tail = "; precision " + automatic->precision();
  EXPECT_EQ(reason.substr(reason.size() - tail.size()), tail) << reason;
  std::optional<IrEmbedder> forced = load(dir, "cpu", Precision::F32);
  ASSERT_TRUE(forced);
  EXPECT_EQ(forced->backend_reason(), "requested; precision f32");
}

TEST(CpuSelection, AutoPicksCpuWhenNoNpuOpens) {
  const std::filesystem::path dir = test_bundle("ir-tiny");
  ASSERT_FALSE(dir.empty());
  std::optional<IrEmbedder> embedder = load(dir, "auto");
  ASSERT_TRUE(embedder);
  if (embedder->backend().rfind("npu", 0) == 0) GTEST_SKIP() << "an NPU backend opened: " << embedder->backend_reason();
  EXPECT_EQ(embedder->backend(), "cpu");
  EXPECT_NE(embedder->backend_reason().find("cpu"), std::string::npos) << embedder->backend_reason();
}

}  // namespace
}  // namespace taconite::cpu_test

// A valid bundle whose structure the lowering does not recognise (a second prelu_bias on the
// stem, which no conv can absorb) must run the exact replay, never a guessed fused network; steps
// the lowering knows but cannot fuse (a standalone add / bias) run as their own oneDNN ops.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "bundle/bundle.hpp"
#include "bundle_cache.hpp"
#include "cpu/cpu_executor.hpp"
#include "cpu/fused_graph.hpp"
#include "plan/plan.hpp"
#include "taconite/embedder.hpp"
#include "taconite/inspect.hpp"

namespace taconite::cpu_test {
namespace {

// A copy of `source` whose manifest repeats its first prelu_bias record right after it.
std::filesystem::path with_doubled_prelu(const std::filesystem::path& source) {
  const std::filesystem::path dir = scratch_dir("doubled-prelu");
  std::filesystem::copy(source, dir, std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  std::ifstream in(source / "manifest.txt");
  std::ostringstream out;
  std::string line;
  bool doubled = false;
  while (std::getline(in, line)) {
    out << line << '\n';
    if (!doubled && line.rfind("prelu_bias ", 0) == 0) {
      out << line << '\n';
      doubled = true;
    }
  }
  EXPECT_TRUE(doubled) << "the IR-tiny manifest has a prelu_bias record";
  std::ofstream(dir / "manifest.txt") << out.str();
  return dir;
}

// A copy of `source` where the first residual add is followed by a standalone `add` (the value
// doubled) and a standalone `bias`: steps no conv can absorb, which the fused network must run
// as their own oneDNN ops.
std::filesystem::path with_standalone_add_and_bias(const std::filesystem::path& source) {
  const std::filesystem::path dir = scratch_dir("standalone-ops");
  std::filesystem::copy(source, dir, std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  std::ifstream in(source / "manifest.txt");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::ostringstream out;
  bool inserted = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out << lines[i] << '\n';
    // add a=A b=B out=O c=C h=H w=W, followed by `affine ... shift=T` (a C-element bf16 tensor).
    if (inserted || lines[i].rfind("add ", 0) != 0 || i + 1 >= lines.size() || lines[i + 1].rfind("affine ", 0) != 0)
      continue;
    std::istringstream fields(lines[i]);
    std::string tag, a, b, o, c, h, w;
    fields >> tag >> a >> b >> o >> c >> h >> w;
    const std::string buf = o.substr(4);  // "out=O"
    const std::string& affine = lines[i + 1];
    const std::size_t at = affine.find("shift=");
    const std::string shift = affine.substr(at + 6, affine.find(' ', at) - at - 6);
    out << "add a=" << buf << " b=" << buf << " out=" << buf << " " << c << " " << h << " " << w << '\n';
    out << "bias buf=" << buf << " " << c << " " << h << " " << w << " bias=" << shift << '\n';
    inserted = true;
  }
  EXPECT_TRUE(inserted) << "the IR-tiny manifest has an add followed by an affine";
  std::ofstream(dir / "manifest.txt") << out.str();
  return dir;
}

std::vector<float> embed_recorded(const std::filesystem::path& dir, const std::string& backend) {
  LoadOptions options;
  options.backend = backend;
  Result<IrEmbedder> loaded = IrEmbedder::load(dir, options);
  if (!loaded) {
    ADD_FAILURE() << loaded.error().message;
    return {};
  }
  EXPECT_EQ(loaded.value().backend(), backend);
  Result<Embedding> embedding = inspect::embed_recorded(loaded.value());
  if (!embedding) ADD_FAILURE() << embedding.error().message;
  return embedding ? embedding.value() : std::vector<float>{};
}

TEST(CpuFallback, UnrecognisedStructureRunsTheExactReplay) {
  const std::filesystem::path original = test_bundle("ir-tiny");
  ASSERT_FALSE(original.empty());
  const std::filesystem::path odd = with_doubled_prelu(original);

  const bundle::Bundle bundle = bundle::Bundle::open(odd);
  const plan::Plan plan = plan::build_plan(bundle);
  const cpu::Lowering lowering = cpu::lower_plan(plan);
  EXPECT_FALSE(lowering.graph.has_value());
  EXPECT_NE(lowering.refusal.find("prelu_bias"), std::string::npos) << lowering.refusal;
  // The registry decides the fallback, and the model reports it once, as a diagnostic.
  LoadOptions options;
  options.backend = "cpu";
  Result<IrEmbedder> fallback = IrEmbedder::load(odd, options);
  ASSERT_TRUE(fallback) << fallback.error().message;
  EXPECT_EQ(fallback.value().backend(), "cpu");
  EXPECT_EQ(fallback.value().precision(), kPrecisionBf16Exact);
  ASSERT_EQ(fallback.value().diagnostics().size(), 1u);
  EXPECT_NE(fallback.value().diagnostics()[0].find("exact replay (not fused)"), std::string::npos);
  EXPECT_NE(fallback.value().diagnostics()[0].find("prelu_bias"), std::string::npos) << fallback.value().diagnostics()[0];
  EXPECT_EQ(fallback.value().backend_reason().find("prelu_bias"), std::string::npos) << "reported once, not twice";

  // Through the public API the `cpu` backend gives exactly the replay's answer...
  const std::vector<float> cpu = embed_recorded(odd, "cpu");
  const std::vector<float> exact = embed_recorded(odd, "cpu-reference");
  ASSERT_FALSE(cpu.empty());
  EXPECT_EQ(cpu, exact);
  // ...which the doubled PReLU really changes (a fused network ignoring it would be wrong).
  EXPECT_NE(exact, embed_recorded(original, "cpu-reference"));
}

TEST(CpuFallback, StandaloneAddAndBiasRunFusedAndMatchTheReplay) {
  const std::filesystem::path original = test_bundle("ir-tiny");
  ASSERT_FALSE(original.empty());
  const std::filesystem::path odd = with_standalone_add_and_bias(original);

  const bundle::Bundle bundle = bundle::Bundle::open(odd);
  const plan::Plan plan = plan::build_plan(bundle);
  const cpu::Lowering lowering = cpu::lower_plan(plan);
  ASSERT_TRUE(lowering.graph.has_value()) << lowering.refusal;
  EXPECT_EQ(lowering.graph->count(cpu::OpKind::Add), 1) << cpu::describe(*lowering.graph);
  EXPECT_EQ(lowering.graph->count(cpu::OpKind::Bias), 1) << cpu::describe(*lowering.graph);

  const std::vector<float> cpu = embed_recorded(odd, "cpu");
  const std::vector<float> exact = embed_recorded(odd, "cpu-reference");
  ASSERT_FALSE(cpu.empty());
  EXPECT_GE(cosine(cpu, exact), 0.9999);
  EXPECT_LT(cosine(exact, embed_recorded(original, "cpu-reference")), 0.99999) << "the inserted steps change the result";
}

}  // namespace
}  // namespace taconite::cpu_test

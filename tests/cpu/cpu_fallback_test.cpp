// A valid bundle whose structure the lowering does not recognise (a second prelu_bias on the
// stem, which no conv can absorb) must run the exact replay, never a guessed fused network.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "bundle/bundle.hpp"
#include "bundle_cache.hpp"
#include "cpu/cpu_executor.hpp"
#include "cpu/fused_graph.hpp"
#include "plan/plan.hpp"
#include "taconite/embedder.hpp"

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

std::vector<float> embed_recorded(const std::filesystem::path& dir, const std::string& backend) {
  LoadOptions options;
  options.backend = backend;
  Result<IrEmbedder> loaded = IrEmbedder::load(dir, options);
  if (!loaded) {
    ADD_FAILURE() << loaded.error().message;
    return {};
  }
  EXPECT_EQ(loaded.value().backend(), backend);
  Result<Embedding> embedding = loaded.value().embed_recorded();
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
  const auto executor = cpu::make_cpu_executor(plan, {cpu::CpuOptions::Precision::Auto, 2});
  EXPECT_FALSE(executor->fused());
  EXPECT_NE(executor->summary().find("prelu_bias"), std::string::npos) << executor->summary();

  // Through the public API the `cpu` backend gives exactly the replay's answer...
  const std::vector<float> cpu = embed_recorded(odd, "cpu");
  const std::vector<float> exact = embed_recorded(odd, "cpu-reference");
  ASSERT_FALSE(cpu.empty());
  EXPECT_EQ(cpu, exact);
  // ...which the doubled PReLU really changes (a fused network ignoring it would be wrong).
  EXPECT_NE(exact, embed_recorded(original, "cpu-reference"));
}

}  // namespace
}  // namespace taconite::cpu_test

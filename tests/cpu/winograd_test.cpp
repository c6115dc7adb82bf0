// f32's Winograd variant (cpu/fused_graph.hpp: make_winograd_variant), one of `precision = auto`'s
// candidates: which ops it marks; on IR-18, the same embeddings as direct f32 convs, batches face by
// face equal to single faces, and Winograd convs and a bf16 head wherever oneDNN has them (AVX-512),
// direct convs and an f32 head elsewhere.
#include <gtest/gtest.h>

#include "bundle/bundle.hpp"
#include "bundle_cache.hpp"
#include "cpu/cpu_executor.hpp"
#include "cpu/fused_graph.hpp"
#include "numerics/bf16.hpp"
#include "plan/plan.hpp"
#include "taconite/embedder.hpp"

namespace taconite::cpu_test {

using numerics::bf16_t;
namespace {

TEST(Winograd, MarksTheWideThreeByThreeStrideOneConvsAndTheHead) {
  const std::filesystem::path dir = test_bundle("ir18", "fixed64");
  ASSERT_FALSE(dir.empty());
  const bundle::Bundle bundle = bundle::Bundle::open(dir);
  const plan::Plan plan = plan::build_plan(bundle);
  cpu::FusedGraph graph = *cpu::lower_plan(plan).graph;
  cpu::make_winograd_variant(graph);
  int marked = 0, strided = 0, narrow = 0, heads = 0;
  for (const cpu::FusedOp& op : graph.ops) {
    const bool conv3x3 = op.kind == cpu::OpKind::Conv && op.kernel == 3 && op.stride == 1;
    const bool wide = op.kind == cpu::OpKind::Conv && graph.values[static_cast<std::size_t>(op.inputs[0])].c >= 16;
    EXPECT_EQ(op.winograd, conv3x3 && wide) << "op at manifest line " << op.line;
    EXPECT_EQ(op.bf16_input, op.kind == cpu::OpKind::Head);
    marked += op.winograd;
    strided += op.kind == cpu::OpKind::Conv && op.stride > 1;
    narrow += conv3x3 && !wide;
    heads += op.bf16_input;
  }
  EXPECT_GT(marked, 0);
  EXPECT_GT(strided, 0);
  EXPECT_EQ(narrow, 1) << "the stem (the image's channels) stays direct";
  EXPECT_EQ(heads, 1);
}

TEST(Winograd, MatchesDirectConvsAndRunsBatchesFaceByFace) {
  const std::filesystem::path dir = test_bundle("ir18", "fixed64");
  ASSERT_FALSE(dir.empty());
  const bundle::Bundle bundle = bundle::Bundle::open(dir);
  const plan::Plan plan = plan::build_plan(bundle);
  const cpu::FusedGraph direct_graph = *cpu::lower_plan(plan).graph;
  cpu::FusedGraph winograd_graph = direct_graph;
  cpu::make_winograd_variant(winograd_graph);
  const std::span<const bf16_t> face = direct_graph.recorded_input;
  ASSERT_FALSE(face.empty());

  const auto direct = cpu::make_cpu_backend(cpu::FusedGraph(direct_graph), {cpu::CpuOptions::Precision::F32, 2});
  const auto winograd = cpu::make_cpu_backend(std::move(winograd_graph), {cpu::CpuOptions::Precision::F32, 2});
  const bool avx512 = cpu::cpu_isa_name().starts_with("avx512");
  EXPECT_EQ(winograd->summary().find("wino") != std::string::npos, avx512)
      << "oneDNN 2.6 has f32 Winograd convs on AVX-512 only; isa " << cpu::cpu_isa_name() << ": " << winograd->summary();
  EXPECT_EQ(direct->summary().find("wino"), std::string::npos) << direct->summary();
  // The head reads a bf16 copy of its input where oneDNN has a bf16 inner product (AVX-512).
  EXPECT_EQ(winograd->summary().find("to-bf16") != std::string::npos, avx512) << winograd->summary();
  EXPECT_EQ(direct->summary().find("to-bf16"), std::string::npos) << direct->summary();

  const std::vector<float> expected = direct->new_session()->forward(face);
  const auto session = winograd->new_session();
  const std::vector<float> single = session->forward(face);
  EXPECT_GE(cosine(single, expected), 0.99999) << "isa " << cpu::cpu_isa_name();

  // A batch of three different faces: the recorded one and two scaled copies.
  std::vector<std::vector<bf16_t>> others;
  for (const float scale : {0.5f, -0.8f}) {
    std::vector<bf16_t>& other = others.emplace_back(face.begin(), face.end());
    for (bf16_t& v : other) v = numerics::f32_to_bf16(numerics::bf16_to_f32(v) * scale);
  }
  const std::span<const bf16_t> batch[] = {face, others[0], others[1]};
  const std::vector<std::vector<float>> outputs = session->forward_batch(batch);
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[0], single) << "face by face: the batch's first face is the single face's forward";
  for (std::size_t k = 1; k < 3; ++k) {
    EXPECT_EQ(outputs[k], session->forward(batch[k])) << "face " << k;
    EXPECT_GE(cosine(outputs[k], direct->new_session()->forward(batch[k])), 0.99999) << "face " << k;
  }
  EXPECT_NE(outputs[1], outputs[2]);
  EXPECT_EQ(session->cached_batch_sizes(), std::vector<int>{1}) << "no batched network is built";
}

}  // namespace
}  // namespace taconite::cpu_test

// The lowering's structure on mkbundle's IR networks: every conv's records merged into one op,
// every affine / bias / PReLU / subsample / residual add absorbed into a conv except the MaxPool
// shortcuts.
#include <gtest/gtest.h>

#include "bundle/bundle.hpp"
#include "bundle_cache.hpp"
#include "cpu/fused_graph.hpp"
#include "plan/plan.hpp"

namespace taconite::cpu_test {
namespace {

template <typename StepType>
int count_steps(const plan::Plan& plan) {
  return static_cast<int>(std::count_if(plan.steps.begin(), plan.steps.end(),
                                        [](const plan::Step& s) { return std::holds_alternative<StepType>(s); }));
}

class FusedGraphShape : public testing::TestWithParam<std::string> {};

TEST_P(FusedGraphShape, EveryIrPatternIsFused) {
  const std::filesystem::path dir = test_bundle(GetParam(), "fixed64");
  ASSERT_FALSE(dir.empty());
  const bundle::Bundle bundle = bundle::Bundle::open(dir);
  const plan::Plan plan = plan::build_plan(bundle);
  const cpu::Lowering lowering = cpu::lower_plan(plan);
  ASSERT_TRUE(lowering.graph.has_value()) << lowering.refusal;
  const cpu::FusedGraph& graph = *lowering.graph;

  int first_records = 0;
  for (const plan::Step& s : plan.steps)
    if (const auto* conv = std::get_if<plan::ConvStep>(&s)) first_records += conv->first;
  ASSERT_LT(first_records, plan.conv_dispatches) << "fixed64 grouping splits some convs into several records";
  EXPECT_EQ(graph.count(cpu::OpKind::Conv), first_records);
  EXPECT_EQ(graph.count(cpu::OpKind::Bias), 0);
  EXPECT_EQ(graph.count(cpu::OpKind::Add), 0) << cpu::describe(graph);
  EXPECT_EQ(graph.count(cpu::OpKind::Affine), 0) << "every unit's leading BN folds into its conv1";
  EXPECT_EQ(graph.count(cpu::OpKind::Head), 1);

  int strided = 0, with_prelu = 0, with_sum = 0, with_affine = 0, records = 0;
  for (const cpu::FusedOp& op : graph.ops) {
    if (op.kind != cpu::OpKind::Conv) continue;
    strided += op.stride == 2;
    with_affine += !op.in_scale.empty();
    with_prelu += !op.alpha.empty();
    with_sum += op.sum_input >= 0;
    records += static_cast<int>(op.records.size());
  }
  EXPECT_EQ(records, plan.conv_dispatches);
  EXPECT_EQ(with_prelu, count_steps<plan::PreluBiasStep>(plan));
  EXPECT_EQ(with_sum, count_steps<plan::AddStep>(plan));
  EXPECT_EQ(with_affine, count_steps<plan::AffineStep>(plan));
  // Each subsample step became a strided conv or stayed a (MaxPool-shortcut) subsample op.
  EXPECT_EQ(strided + graph.count(cpu::OpKind::Subsample), count_steps<plan::SubsampleStep>(plan));
  EXPECT_GT(strided, 0);
}

INSTANTIATE_TEST_SUITE_P(Models, FusedGraphShape, testing::Values("ir-tiny", "ir18"),
                         [](const auto& info) { return info.param == "ir18" ? std::string("ir18") : std::string("ir_tiny"); });

}  // namespace
}  // namespace taconite::cpu_test

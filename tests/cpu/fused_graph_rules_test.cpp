// The lowering's rules on small hand-built plans: each fusion happens exactly when its
// preconditions hold, and a structure outside them is refused (the exact replay then runs).
#include <gtest/gtest.h>

#include "cpu/fused_graph.hpp"
#include "plan/plan.hpp"

namespace taconite::cpu_test {
namespace {

using plan::Dims;

// Builds plans step by step; spans stay empty (the lowering reads only the structure).
struct PlanBuilder {
  plan::Plan plan;
  explicit PlanBuilder(int slots) { plan.slot_elements.assign(static_cast<std::size_t>(slots), 0); }
  PlanBuilder& input(int buf, Dims d) {
    plan.steps.push_back(plan::InputStep{buf, d, {}});
    plan.input = d;
    return *this;
  }
  PlanBuilder& conv(int in, int out, Dims d, int kernel = 3) {
    plan::ConvStep s{};
    s.in = in, s.ict = d.c, s.h = d.h, s.w = d.w, s.c0 = 0, s.icg = d.c, s.wp = d.w;
    s.out = out, s.oc = d.c, s.oh = d.h, s.ow = d.w, s.owp = d.w, s.kernel = kernel;
    s.first = s.last = true;
    s.line = static_cast<int>(plan.steps.size()) + 1;
    plan.steps.push_back(s);
    return *this;
  }
  PlanBuilder& bias(int buf, Dims d) {
    plan.steps.push_back(plan::BiasStep{buf, d, {}});
    return *this;
  }
  PlanBuilder& subsample(int in, int out, Dims d, int stride) {
    plan.steps.push_back(plan::SubsampleStep{in, out, d, stride});
    return *this;
  }
  PlanBuilder& add(int a, int b, int out, Dims d) {
    plan.steps.push_back(plan::AddStep{a, b, out, d});
    return *this;
  }
  PlanBuilder& head(int in, Dims d) {
    plan.steps.push_back(plan::HeadStep{in, d, d.elements(), 8, {}, {}});
    return *this;
  }
};

TEST(FusedGraphRules, SubsampleOfAnOddSizeIsRefused) {
  const Dims odd{8, 5, 5}, half{8, 2, 2};
  PlanBuilder b(3);
  b.input(0, odd).conv(0, 1, odd).subsample(1, 2, odd, 2).head(2, half);
  const cpu::Lowering lowering = cpu::lower_plan(b.plan);
  EXPECT_FALSE(lowering.graph.has_value());
  EXPECT_NE(lowering.refusal.find("subsample"), std::string::npos) << lowering.refusal;
}

TEST(FusedGraphRules, ResidualOnTheConvsOwnInputStaysAnAdd) {
  const Dims d{8, 4, 4};
  PlanBuilder b(4);
  b.input(0, d).conv(0, 1, d).conv(1, 2, d).add(2, 1, 3, d).head(3, d);
  const cpu::Lowering lowering = cpu::lower_plan(b.plan);
  ASSERT_TRUE(lowering.graph.has_value()) << lowering.refusal;
  EXPECT_EQ(lowering.graph->count(cpu::OpKind::Add), 1) << cpu::describe(*lowering.graph);
}

TEST(FusedGraphRules, ResidualOperandReadAfterTheConvStaysAnAdd) {
  const Dims d{8, 4, 4};
  PlanBuilder b(5);
  // Buffer 0 (the input) is read again by the last conv, so no conv may accumulate into it.
  b.input(0, d).conv(0, 1, d).conv(1, 2, d).add(2, 0, 3, d).conv(0, 4, d).add(3, 4, 3, d).head(3, d);
  const cpu::Lowering lowering = cpu::lower_plan(b.plan);
  ASSERT_TRUE(lowering.graph.has_value()) << lowering.refusal;
  // The first add stays; the second (operand 3 dies there) becomes the last conv's sum.
  EXPECT_EQ(lowering.graph->count(cpu::OpKind::Add), 1) << cpu::describe(*lowering.graph);
  const cpu::FusedOp& last_conv = lowering.graph->ops[lowering.graph->ops.size() - 2];
  EXPECT_EQ(last_conv.kind, cpu::OpKind::Conv);
  EXPECT_GE(last_conv.sum_input, 0);
}

TEST(FusedGraphRules, MaxPoolShortcutIsHoistedSoTheStridedConvAccumulatesIntoIt) {
  const Dims full{8, 4, 4}, half{8, 2, 2};
  PlanBuilder b(4);
  b.input(0, full).conv(0, 1, full).bias(1, full).subsample(1, 1, full, 2).subsample(0, 2, full, 2).add(1, 2, 3, half)
      .head(3, half);
  const cpu::Lowering lowering = cpu::lower_plan(b.plan);
  ASSERT_TRUE(lowering.graph.has_value()) << lowering.refusal;
  const cpu::FusedGraph& g = *lowering.graph;
  ASSERT_EQ(g.ops.size(), 4u) << cpu::describe(g);  // input, subsample, conv, head
  EXPECT_EQ(g.ops[1].kind, cpu::OpKind::Subsample);
  const cpu::FusedOp& conv = g.ops[2];
  ASSERT_EQ(conv.kind, cpu::OpKind::Conv);
  EXPECT_EQ(conv.stride, 2);
  EXPECT_EQ(conv.sum_input, g.ops[1].output);
  EXPECT_EQ(conv.output, g.ops[3].inputs[0]);
}

TEST(FusedGraphRules, SubsampleBeforeA1x1ConvBecomesItsStride) {
  const Dims full{8, 4, 4}, half{8, 2, 2};
  PlanBuilder b(3);
  b.input(0, full).subsample(0, 1, full, 2).conv(1, 2, half, 1).head(2, half);
  const cpu::Lowering lowering = cpu::lower_plan(b.plan);
  ASSERT_TRUE(lowering.graph.has_value()) << lowering.refusal;
  EXPECT_EQ(lowering.graph->count(cpu::OpKind::Subsample), 0) << cpu::describe(*lowering.graph);
  EXPECT_EQ(lowering.graph->ops[1].stride, 2);
  EXPECT_EQ(lowering.graph->ops[1].inputs[0], lowering.graph->input_value);
}

}  // namespace
}  // namespace taconite::cpu_test

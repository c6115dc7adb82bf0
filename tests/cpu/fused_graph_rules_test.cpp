// The lowering's rules on small hand-built plans: each fusion happens exactly when its
// preconditions hold, and a structure outside them is refused (the exact replay then runs).
#include <list>

#include <gtest/gtest.h>

#include "cpu/fused_graph.hpp"
#include "plan/plan.hpp"

namespace taconite::cpu_test {
namespace {

using numerics::bf16_t;
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
  // The lowering copies the scale/shift spans; they only need to be non-empty.
  PlanBuilder& affine(int in, int out, Dims d) {
    plan.steps.push_back(plan::AffineStep{in, out, d, channel_values(d), channel_values(d)});
    return *this;
  }
  PlanBuilder& prelu_bias(int buf, Dims d) {
    plan.steps.push_back(plan::PreluBiasStep{buf, d, channel_values(d), channel_values(d)});
    return *this;
  }
  std::span<const bf16_t> channel_values(Dims d) {
    values.emplace_back(static_cast<std::size_t>(d.c), bf16_t{0x3f80});
    return values.back();
  }
  std::list<std::vector<bf16_t>> values;  // stable addresses
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

// The conv reading the affine's output, or nullptr.
const cpu::FusedOp* conv_reading(const cpu::FusedGraph& g, int value) {
  for (const cpu::FusedOp& op : g.ops)
    if (op.kind == cpu::OpKind::Conv && op.inputs[0] == value) return &op;
  return nullptr;
}

TEST(FusedGraphRules, AffineBeforeA3x3ConvIsFoldedIntoIt) {
  const Dims d{8, 4, 4};
  PlanBuilder b(3);
  b.input(0, d).affine(0, 1, d).conv(1, 2, d).prelu_bias(2, d).head(2, d);
  const cpu::Lowering lowering = cpu::lower_plan(b.plan);
  ASSERT_TRUE(lowering.graph.has_value()) << lowering.refusal;
  const cpu::FusedGraph& g = *lowering.graph;
  EXPECT_EQ(g.count(cpu::OpKind::Affine), 0) << cpu::describe(g);
  const cpu::FusedOp* conv = conv_reading(g, g.input_value);
  ASSERT_NE(conv, nullptr) << "the conv reads the affine's input";
  EXPECT_EQ(conv->in_scale.size(), 8u);
  EXPECT_EQ(conv->in_shift.size(), 8u);
  EXPECT_EQ(conv->alpha.size(), 8u) << "the PReLU still fuses after the fold";
  EXPECT_NE(cpu::describe(g).find("+input affine 1"), std::string::npos) << cpu::describe(g);
}

// The IR unit: BN -> conv1 -> PReLU -> conv2 + bias, plus the identity shortcut. The fold makes
// conv1 read the unit's input, and conv2 still accumulates into that input's buffer (conv1 reads
// it first).
TEST(FusedGraphRules, FoldedUnitStillSumsIntoItsInput) {
  const Dims d{8, 4, 4};
  PlanBuilder b(5);
  b.input(0, d).conv(0, 1, d).affine(1, 2, d).conv(2, 3, d).prelu_bias(3, d).conv(3, 4, d).bias(4, d).add(4, 1, 1, d)
      .head(1, d);
  const cpu::Lowering lowering = cpu::lower_plan(b.plan);
  ASSERT_TRUE(lowering.graph.has_value()) << lowering.refusal;
  const cpu::FusedGraph& g = *lowering.graph;
  EXPECT_EQ(g.count(cpu::OpKind::Affine), 0) << cpu::describe(g);
  EXPECT_EQ(g.count(cpu::OpKind::Add), 0) << cpu::describe(g);
  ASSERT_EQ(g.count(cpu::OpKind::Conv), 3) << cpu::describe(g);
  const cpu::FusedOp& stem = g.ops[1], &conv1 = g.ops[2], &conv2 = g.ops[3];
  EXPECT_EQ(conv1.inputs[0], stem.output);
  EXPECT_FALSE(conv1.in_scale.empty());
  EXPECT_EQ(conv2.sum_input, stem.output);
}

TEST(FusedGraphRules, AffineReadByTwoOpsStays) {
  const Dims d{8, 4, 4};
  PlanBuilder b(4);
  b.input(0, d).affine(0, 1, d).conv(1, 2, d).add(2, 1, 3, d).head(3, d);
  const cpu::Lowering lowering = cpu::lower_plan(b.plan);
  ASSERT_TRUE(lowering.graph.has_value()) << lowering.refusal;
  EXPECT_EQ(lowering.graph->count(cpu::OpKind::Affine), 1) << cpu::describe(*lowering.graph);
  const cpu::FusedOp* conv = conv_reading(*lowering.graph, lowering.graph->ops[1].output);
  ASSERT_NE(conv, nullptr);
  EXPECT_TRUE(conv->in_scale.empty());
}

TEST(FusedGraphRules, AffineBeforeA1x1ConvStays) {
  const Dims d{8, 4, 4};
  PlanBuilder b(3);
  b.input(0, d).affine(0, 1, d).conv(1, 2, d, 1).head(2, d);
  const cpu::Lowering lowering = cpu::lower_plan(b.plan);
  ASSERT_TRUE(lowering.graph.has_value()) << lowering.refusal;
  EXPECT_EQ(lowering.graph->count(cpu::OpKind::Affine), 1) << cpu::describe(*lowering.graph);
}

TEST(FusedGraphRules, AffineReadByANonConvStays) {
  const Dims d{8, 4, 4}, half{8, 2, 2};
  PlanBuilder b(3);
  b.input(0, d).affine(0, 1, d).subsample(1, 2, d, 2).head(2, half);
  const cpu::Lowering lowering = cpu::lower_plan(b.plan);
  ASSERT_TRUE(lowering.graph.has_value()) << lowering.refusal;
  EXPECT_EQ(lowering.graph->count(cpu::OpKind::Affine), 1) << cpu::describe(*lowering.graph);
}

// Two affines in a row: the first feeds an affine (stays), the second folds into the conv.
TEST(FusedGraphRules, OnlyTheAffineNextToTheConvFolds) {
  const Dims d{8, 4, 4};
  PlanBuilder b(4);
  b.input(0, d).affine(0, 1, d).affine(1, 2, d).conv(2, 3, d).head(3, d);
  const cpu::Lowering lowering = cpu::lower_plan(b.plan);
  ASSERT_TRUE(lowering.graph.has_value()) << lowering.refusal;
  const cpu::FusedGraph& g = *lowering.graph;
  EXPECT_EQ(g.count(cpu::OpKind::Affine), 1) << cpu::describe(g);
  ASSERT_EQ(g.ops[1].kind, cpu::OpKind::Affine);
  const cpu::FusedOp* conv = conv_reading(g, g.ops[1].output);
  ASSERT_NE(conv, nullptr);
  EXPECT_FALSE(conv->in_scale.empty());
}

// An affine output read only as an add's operand (the conv reads the affine's input instead):
// no conv reads it as its input, so nothing folds.
TEST(FusedGraphRules, AffineAsResidualOperandStays) {
  const Dims d{8, 4, 4};
  PlanBuilder b(4);
  b.input(0, d).affine(0, 1, d).conv(0, 2, d).add(2, 1, 3, d).head(3, d);
  const cpu::Lowering lowering = cpu::lower_plan(b.plan);
  ASSERT_TRUE(lowering.graph.has_value()) << lowering.refusal;
  const cpu::FusedGraph& g = *lowering.graph;
  EXPECT_EQ(g.count(cpu::OpKind::Affine), 1) << cpu::describe(g);
  for (const cpu::FusedOp& op : g.ops) EXPECT_TRUE(op.in_scale.empty());
}

}  // namespace
}  // namespace taconite::cpu_test

// The replay executor against a plain step-by-step replay written here with nothing but the
// scalar definitions of bf16.hpp and naive loops over the tiled layout. The executor bands, fuses,
// vectorises and threads its host glue, cuts conv slices ahead and sums conv records straight from
// two output buffers; none of that may change a single bit, for any grouping (one, two or several
// records per conv) or thread count. Both sides run their convs on the cpu-reference device.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "bundle/bundle.hpp"
#include "numerics/bf16.hpp"
#include "numerics/tiled_layout.hpp"
#include "plan/plan.hpp"
#include "replay/cpu_reference_device.hpp"
#include "replay/replay_executor.hpp"
#include "test_bundles.hpp"

namespace taconite::mkbundle {
namespace {

using numerics::bf16_t;
using numerics::bf16_to_f32;
using numerics::f32_to_bf16;
using numerics::tiled_index;

float f(bf16_t v) { return bf16_to_f32(v); }

// Calls fn(i, channel) for every element index i of a tiled buffer with dims d.
template <typename Fn>
void for_each_element(const plan::Dims& d, Fn fn) {
  for (int y = 0; y < d.h; ++y)
    for (int ch = 0; ch < d.c; ++ch)
      for (int x = 0; x < d.w; ++x) {
        const auto i = tiled_index(static_cast<std::size_t>(d.c), static_cast<std::size_t>(d.w),
                                   static_cast<std::size_t>(ch), static_cast<std::size_t>(y), static_cast<std::size_t>(x));
        fn(i, static_cast<std::size_t>(ch));
      }
}

// Spec §4.1 / §5.1 / §6 one step at a time, element by element.
class StepByStepReplay {
 public:
  explicit StepByStepReplay(const plan::Plan& plan) : plan_(plan), device_(replay::make_cpu_reference_device(1)) {
    for (std::size_t elements : plan.slot_elements) slots_.emplace_back(elements);
  }

  std::vector<float> forward(std::span<const bf16_t> input) {
    std::vector<float> embedding;
    for (const plan::Step& step : plan_.steps) std::visit([&](const auto& s) { run(s, input, embedding); }, step);
    return embedding;
  }

 private:
  std::vector<bf16_t>& slot(plan::Slot s) { return slots_[static_cast<std::size_t>(s)]; }

  void run(const plan::InputStep& s, std::span<const bf16_t> input, std::vector<float>&) {
    std::copy(input.begin(), input.end(), slot(s.buf).begin());
  }

  void run(const plan::ConvStep& s, std::span<const bf16_t>, std::vector<float>&) {
    const std::size_t ict = static_cast<std::size_t>(s.ict), icg = static_cast<std::size_t>(s.icg);
    const std::size_t w = static_cast<std::size_t>(s.w), wp = static_cast<std::size_t>(s.wp);
    std::vector<bf16_t> slice(static_cast<std::size_t>(s.h) * icg * wp, 0);
    for (std::size_t y = 0; y < static_cast<std::size_t>(s.h); ++y)
      for (std::size_t ch = 0; ch < icg; ++ch)
        for (std::size_t x = 0; x < w; ++x)
          slice[tiled_index(icg, wp, ch, y, x)] = slot(s.in)[tiled_index(ict, w, 8 * static_cast<std::size_t>(s.c0) + ch, y, x)];
    std::vector<bf16_t> out(static_cast<std::size_t>(s.oh) * s.oc * s.owp);
    device_->run(replay::ConvDispatch{s, plan_.contexts[static_cast<std::size_t>(s.context)], slice, s.weights, out});
    if (s.first) acc_.assign(out.size(), 0.0f);
    for (std::size_t i = 0; i < out.size(); ++i) acc_[i] = s.first ? f(out[i]) : acc_[i] + f(out[i]);
    if (!s.last) return;
    const std::size_t oc = static_cast<std::size_t>(s.oc), ow = static_cast<std::size_t>(s.ow), owp = static_cast<std::size_t>(s.owp);
    for (std::size_t y = 0; y < static_cast<std::size_t>(s.oh); ++y)
      for (std::size_t ch = 0; ch < oc; ++ch)
        for (std::size_t x = 0; x < ow; ++x)
          slot(s.out)[tiled_index(oc, ow, ch, y, x)] = f32_to_bf16(acc_[tiled_index(oc, owp, ch, y, x)]);
  }

  void run(const plan::AffineStep& s, std::span<const bf16_t>, std::vector<float>&) {
    for_each_element(s.dims, [&](std::size_t i, std::size_t c) {
      const float scaled = f(slot(s.in)[i]) * f(s.scale[c]);
      slot(s.out)[i] = f32_to_bf16(scaled + f(s.shift[c]));
    });
  }

  void run(const plan::PreluBiasStep& s, std::span<const bf16_t>, std::vector<float>&) {
    for_each_element(s.dims, [&](std::size_t i, std::size_t c) {
      const float t = numerics::round_to_bf16(f(slot(s.buf)[i]) + f(s.bias[c]));
      slot(s.buf)[i] = f32_to_bf16(t < 0.0f ? f(s.alpha[c]) * t : t);
    });
  }

  void run(const plan::BiasStep& s, std::span<const bf16_t>, std::vector<float>&) {
    for_each_element(s.dims, [&](std::size_t i, std::size_t c) { slot(s.buf)[i] = f32_to_bf16(f(slot(s.buf)[i]) + f(s.bias[c])); });
  }

  void run(const plan::SubsampleStep& s, std::span<const bf16_t>, std::vector<float>&) {
    const plan::Dims in = s.dims, out = s.out_dims();
    std::vector<bf16_t> result(out.elements());
    for (int y = 0; y < out.h; ++y)
      for (int ch = 0; ch < out.c; ++ch)
        for (int x = 0; x < out.w; ++x)
          result[tiled_index(static_cast<std::size_t>(out.c), static_cast<std::size_t>(out.w), static_cast<std::size_t>(ch),
                             static_cast<std::size_t>(y), static_cast<std::size_t>(x))] =
              slot(s.in)[tiled_index(static_cast<std::size_t>(in.c), static_cast<std::size_t>(in.w), static_cast<std::size_t>(ch),
                                     static_cast<std::size_t>(y * s.stride), static_cast<std::size_t>(x * s.stride))];
    std::copy(result.begin(), result.end(), slot(s.out).begin());
  }

  void run(const plan::AddStep& s, std::span<const bf16_t>, std::vector<float>&) {
    for_each_element(s.dims, [&](std::size_t i, std::size_t) { slot(s.out)[i] = f32_to_bf16(f(slot(s.a)[i]) + f(slot(s.b)[i])); });
  }

  void run(const plan::HeadStep& s, std::span<const bf16_t>, std::vector<float>& embedding) {
    const plan::Dims d = s.dims;
    std::vector<float> x;  // channel-major
    for (int ch = 0; ch < d.c; ++ch)
      for (int y = 0; y < d.h; ++y)
        for (int col = 0; col < d.w; ++col)
          x.push_back(f(slot(s.in)[tiled_index(static_cast<std::size_t>(d.c), static_cast<std::size_t>(d.w),
                                               static_cast<std::size_t>(ch), static_cast<std::size_t>(y),
                                               static_cast<std::size_t>(col))]));
    embedding.assign(s.n, 0.0f);
    for (std::size_t j = 0; j < s.n; ++j) {
      float sum = 0.0f;
      for (std::size_t i = 0; i < s.k; ++i) sum += x[i] * f(s.weights_t[i * s.n + j]);
      embedding[j] = s.bias[j] + sum;
    }
  }

  const plan::Plan& plan_;
  std::unique_ptr<replay::ConvDevice> device_;
  std::vector<std::vector<bf16_t>> slots_;
  std::vector<float> acc_;
};

void expect_bit_identical(const std::vector<float>& actual, const std::vector<float>& expected, const char* what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (std::size_t j = 0; j < expected.size(); ++j)
    ASSERT_EQ(std::memcmp(&actual[j], &expected[j], sizeof(float)), 0)
        << what << ": element " << j << " is " << actual[j] << ", step by step gives " << expected[j];
}

void expect_executor_matches_step_by_step(ModelKind model, Grouping grouping) {
  const auto bundle = bundle::Bundle::open(testing::written_bundle(model, grouping).dir);
  const plan::Plan plan = plan::build_plan(bundle);
  const std::span<const bf16_t> input = plan.input_step().recorded;
  const std::vector<float> expected = StepByStepReplay(plan).forward(input);
  for (int threads : {1, 2}) {
    auto executor = replay::make_replay_executor(plan, replay::make_cpu_reference_device(threads), threads);
    const std::string what = model_param_name(model) + " " + to_string(grouping) + ", " + std::to_string(threads) + " thread(s)";
    expect_bit_identical(executor->forward(input), expected, what.c_str());
    expect_bit_identical(executor->forward(input), expected, (what + ", second forward").c_str());
  }
}

TEST(ExactReplay, IrTinyEveryGroupingEqualsStepByStep) {
  for (Grouping grouping : {Grouping::Tile, Grouping::Whole, Grouping::Fixed64, Grouping::Uneven})
    expect_executor_matches_step_by_step(ModelKind::IrTiny, grouping);
}

// Full-size activations: 112x112 bands run in parallel, and tile grouping splits convs in two.
TEST(ExactReplay, Ir18EqualsStepByStep) { expect_executor_matches_step_by_step(ModelKind::Ir18, Grouping::Tile); }

}  // namespace
}  // namespace taconite::mkbundle

// The cpu-reference device (spec §5.2) against a naive triple-loop conv: one dispatch, tiled and
// width-padded input slice, packed weights, tiled and width-padded output.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "naive_reference.hpp"
#include "numerics/bf16.hpp"
#include "numerics/weight_packing.hpp"
#include "replay/cpu_reference_device.hpp"
#include "taconite/embedder.hpp"

namespace taconite::replay {
namespace {

using numerics::bf16_t;

struct ConvCase {
  int kernel, icg, oc, h, w, wp, owp;
};

void PrintTo(const ConvCase& c, std::ostream* out) {
  *out << c.kernel << "x" << c.kernel << " icg=" << c.icg << " oc=" << c.oc << " " << c.h << "x" << c.w << " wp=" << c.wp
       << " owp=" << c.owp;
}

struct DispatchResult {
  std::vector<float> device;  // [oc][h][w], from the tiled output
  std::vector<float> naive;   // [oc][h][w], naive f32 sums rounded once to bf16
  bool padding_zero = true;   // every output column >= w is zero
};

// Runs one dispatch on the device with the given channel-major input and OIHW weights.
DispatchResult run_dispatch(const ConvCase& c, const std::vector<float>& input, const std::vector<float>& oihw) {
  std::vector<bf16_t> slice(static_cast<std::size_t>(c.h) * c.icg * c.wp, 0);
  for (int ch = 0; ch < c.icg; ++ch)
    for (int y = 0; y < c.h; ++y)
      for (int x = 0; x < c.w; ++x)
        slice[((static_cast<std::size_t>(y) * (c.icg / 8) + ch / 8) * c.wp + x) * 8 + ch % 8] =
            numerics::f32_to_bf16(input[(static_cast<std::size_t>(ch) * c.h + y) * c.w + x]);

  const numerics::ConvWeightShape shape{static_cast<std::size_t>(c.oc), static_cast<std::size_t>(c.icg),
                                        static_cast<std::size_t>(c.kernel)};
  std::vector<bf16_t> plain(shape.elements()), packed(shape.elements());
  for (std::size_t i = 0; i < plain.size(); ++i) plain[i] = numerics::f32_to_bf16(oihw[i]);
  numerics::pack_conv_weights(shape, plain, packed);

  plan::ConvStep step{};
  step.ict = c.icg, step.h = c.h, step.w = c.w, step.c0 = 0, step.icg = c.icg, step.wp = c.wp;
  step.oc = c.oc, step.oh = c.h, step.ow = c.w, step.owp = c.owp, step.kernel = c.kernel;
  step.weights = packed, step.first = step.last = true, step.line = 1;
  const plan::KernelContext context{"k", "kernels/k.xclbin", "conv", "kernels/k.insts.bin", 1, 1};
  std::vector<bf16_t> output(static_cast<std::size_t>(c.h) * c.oc * c.owp, 0x7f80);  // garbage-filled

  auto device = make_cpu_reference_device(2);
  EXPECT_EQ(device->name(), "cpu-reference");
  device->run(ConvDispatch{step, context, slice, packed, output});

  DispatchResult result;
  result.naive = testing::naive_conv(input, c.icg, c.h, c.w, oihw, c.oc, c.kernel);
  for (float& v : result.naive) v = testing::naive_round_bf16(v);
  result.device.resize(result.naive.size());
  for (int o = 0; o < c.oc; ++o)
    for (int y = 0; y < c.h; ++y)
      for (int x = 0; x < c.owp; ++x) {
        const bf16_t v = output[((static_cast<std::size_t>(y) * (c.oc / 8) + o / 8) * c.owp + x) * 8 + o % 8];
        if (x < c.w) result.device[(static_cast<std::size_t>(o) * c.h + y) * c.w + x] = numerics::bf16_to_f32(v);
        else if (v != 0) result.padding_zero = false;
      }
  return result;
}

class CpuReferenceConv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(CpuReferenceConv, MatchesNaiveConvOnRandomBf16Data) {
  const ConvCase c = GetParam();
  std::mt19937 rng(static_cast<unsigned>(c.kernel * 1000 + c.icg * 10 + c.w));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> input(static_cast<std::size_t>(c.icg) * c.h * c.w), weights(static_cast<std::size_t>(c.oc) * c.icg * c.kernel * c.kernel);
  for (float& v : input) v = numerics::round_to_bf16(dist(rng));
  for (float& v : weights) v = numerics::round_to_bf16(dist(rng) * 0.2f);

  const DispatchResult r = run_dispatch(c, input, weights);
  EXPECT_TRUE(r.padding_zero);
  EXPECT_GE(cosine(r.device, r.naive), 0.99999);
  double max_abs = 0.0, max_value = 0.0;
  for (std::size_t i = 0; i < r.naive.size(); ++i) {
    max_abs = std::max(max_abs, static_cast<double>(std::fabs(r.device[i] - r.naive[i])));
    max_value = std::max(max_value, static_cast<double>(std::fabs(r.naive[i])));
    // Only the summation order may differ: at most one bf16 step apart.
    EXPECT_LE(std::fabs(r.device[i] - r.naive[i]), std::fabs(r.naive[i]) * (1.0f / 128.0f) + 1e-6f) << i;
  }
  EXPECT_LE(max_abs, max_value / 64.0);
}

TEST_P(CpuReferenceConv, IsBitExactWhenEverySumIsExact) {
  // Small integers: every partial sum is exact in f32, so any summation order gives the same
  // f32 value and the single RNE rounding must then agree bit for bit.
  const ConvCase c = GetParam();
  std::mt19937 rng(7u + static_cast<unsigned>(c.oc));
  std::uniform_int_distribution<int> dist(-3, 3);
  std::vector<float> input(static_cast<std::size_t>(c.icg) * c.h * c.w), weights(static_cast<std::size_t>(c.oc) * c.icg * c.kernel * c.kernel);
  for (float& v : input) v = static_cast<float>(dist(rng));
  for (float& v : weights) v = static_cast<float>(dist(rng));

  const DispatchResult r = run_dispatch(c, input, weights);
  EXPECT_TRUE(r.padding_zero);
  EXPECT_EQ(r.device, r.naive);
}

INSTANTIATE_TEST_SUITE_P(Shapes, CpuReferenceConv,
                         ::testing::Values(ConvCase{3, 16, 16, 5, 7, 8, 12}, ConvCase{1, 24, 8, 4, 13, 16, 16},
                                           ConvCase{3, 8, 24, 9, 17, 20, 20}, ConvCase{3, 8, 8, 1, 1, 4, 4},
                                           ConvCase{1, 8, 16, 3, 3, 4, 8}, ConvCase{3, 32, 16, 14, 14, 16, 16}));

}  // namespace
}  // namespace taconite::replay

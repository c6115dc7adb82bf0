// The border correction written into oneDNN layouts: plain, channels-last and channel-blocked
// (with padded channel blocks), f32 and bf16, two images; compared through a oneDNN reorder to
// plain NCHW f32.
#include <gtest/gtest.h>

#include <oneapi/dnnl/dnnl.hpp>

#include "cpu/border_fix.hpp"
#include "numerics/bf16.hpp"

namespace taconite::cpu_test {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

struct Layout {
  tag format;
  dt type;
  const char* name;
};

class BorderFixLayouts : public testing::TestWithParam<Layout> {};

TEST_P(BorderFixLayouts, AddsEachPixelsCorrectionToEveryChannelOfEveryImage) {
  const int n = 2, c = 20, h = 5, w = 4;
  cpu::BorderCorrection border;
  border.oc = c;
  border.pixels = {{0, 0, 0}, {0, 3, 1}, {4, 2, 1}, {2, 0, 0}};
  for (int table = 0; table < 2; ++table)
    for (int ch = 0; ch < c; ++ch) border.corrections.push_back(static_cast<float>(table * 100 + ch + 1));

  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const dnnl::memory::desc plain({n, c, h, w}, dt::f32, tag::nchw), laid({n, c, h, w}, GetParam().type, GetParam().format);
  // Start from distinct values (exact in bf16) so a wrong offset shows up as a wrong sum.
  dnnl::memory source(plain, engine), dst(laid, engine), back(plain, engine);
  float* start = static_cast<float*>(source.get_data_handle());
  for (int i = 0; i < n * c * h * w; ++i) start[i] = static_cast<float>(i % 64);
  dnnl::reorder(source, dst).execute(stream, source, dst);
  stream.wait();

  cpu::BorderFix(border, laid).apply(dst);
  dnnl::reorder(dst, back).execute(stream, dst, back);
  stream.wait();

  std::vector<float> expected(start, start + n * c * h * w);
  for (int image = 0; image < n; ++image)
    for (const auto& p : border.pixels)
      for (int ch = 0; ch < c; ++ch)
        expected[static_cast<std::size_t>(((image * c + ch) * h + p.y) * w + p.x)] +=
            border.corrections[static_cast<std::size_t>(p.table * c + ch)];
  const float* got = static_cast<const float*>(back.get_data_handle());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const float want = GetParam().type == dt::bf16 ? numerics::round_to_bf16(expected[i]) : expected[i];
    ASSERT_EQ(got[i], want) << "element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, BorderFixLayouts,
                         testing::Values(Layout{tag::nchw, dt::f32, "nchw_f32"}, Layout{tag::nhwc, dt::f32, "nhwc_f32"},
                                         Layout{tag::nChw16c, dt::f32, "nChw16c_f32"},
                                         Layout{tag::nChw8c, dt::f32, "nChw8c_f32"},
                                         Layout{tag::nChw16c, dt::bf16, "nChw16c_bf16"},
                                         Layout{tag::nhwc, dt::bf16, "nhwc_bf16"}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(BorderFix, RefusesAnOutputOfAnotherShape) {
  cpu::BorderCorrection border;
  border.oc = 8;
  border.pixels = {{6, 0, 0}};
  border.corrections.assign(8, 1.0f);
  const dnnl::memory::desc small({1, 8, 4, 4}, dt::f32, tag::nchw);
  EXPECT_THROW(cpu::BorderFix(border, small), dnnl::error);
}

}  // namespace
}  // namespace taconite::cpu_test

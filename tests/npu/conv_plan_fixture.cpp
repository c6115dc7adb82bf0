#include "conv_plan_fixture.hpp"

#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>

#include "mkbundle/placeholder_kernel.hpp"
#include "numerics/tiled_layout.hpp"
#include "xclbin_fixture.hpp"

namespace taconite::npu_test {

using numerics::bf16_t;

namespace {

std::filesystem::path make_temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "taconite-npu-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

}  // namespace

ConvPlanFixture::ConvPlanFixture(const std::vector<ConvCase>& cases, unsigned seed)
    : dir_(make_temp_dir()), cases_(cases) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const ConvCase& c = cases[i];
    const std::string key = "conv" + std::to_string(i);
    plan::KernelContext context;
    context.key = key;
    context.xclbin = dir_ / (key + ".xclbin");
    context.kernel_name = "MLIR_AIE";
    context.insts = dir_ / (key + ".insts.bin");
    context.xclbin_line = static_cast<int>(10 + i);
    context.first_conv_line = static_cast<int>(100 + i);
    write_file(context.xclbin, build_xclbin({}));
    const auto words = mkbundle::encode_descriptor(
        {static_cast<std::uint32_t>(c.kernel), static_cast<std::uint32_t>(c.icg), static_cast<std::uint32_t>(c.oc),
         static_cast<std::uint32_t>(c.h), static_cast<std::uint32_t>(c.w), static_cast<std::uint32_t>(c.wp),
         static_cast<std::uint32_t>(c.owp)});
    std::vector<std::uint8_t> insts(words.size() * 4);
    std::memcpy(insts.data(), words.data(), insts.size());
    write_file(context.insts, insts);
    plan_.contexts.push_back(context);

    std::vector<bf16_t> input(static_cast<std::size_t>(c.h) * c.icg * c.wp, bf16_t{0});
    for (int y = 0; y < c.h; ++y)
      for (int ch = 0; ch < c.icg; ++ch)
        for (int x = 0; x < c.w; ++x)  // columns >= w stay zero (spec §5.1)
          input[numerics::tiled_index(c.icg, c.wp, ch, y, x)] = numerics::f32_to_bf16(value(rng));
    std::vector<bf16_t> weights(static_cast<std::size_t>(c.oc) * c.icg * c.kernel * c.kernel);
    for (bf16_t& w : weights) w = numerics::f32_to_bf16(value(rng) * 0.2f);
    inputs_.push_back(std::move(input));
    weights_.push_back(std::move(weights));

    plan::ConvStep step{};
    step.in = 0;
    step.ict = c.icg;
    step.h = c.h;
    step.w = c.w;
    step.c0 = 0;
    step.icg = c.icg;
    step.wp = c.wp;
    step.out = 1;
    step.oc = c.oc;
    step.oh = c.h;
    step.ow = c.w;
    step.owp = c.owp;
    step.kernel = c.kernel;
    step.context = static_cast<int>(i);
    step.weights = weights_.back();
    step.first = step.last = true;
    step.line = context.first_conv_line;
    plan_.steps.emplace_back(step);
    plan_.max_slice_elements = std::max(plan_.max_slice_elements, inputs_.back().size());
    plan_.max_dispatch_elements = std::max(plan_.max_dispatch_elements, output_elements(i));
  }
}

ConvPlanFixture::~ConvPlanFixture() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::size_t ConvPlanFixture::output_elements(std::size_t i) const {
  const ConvCase& c = cases_[i];
  return static_cast<std::size_t>(c.h) * c.oc * c.owp;
}

replay::ConvDispatch ConvPlanFixture::dispatch(std::size_t i, std::vector<bf16_t>& output) const {
  output.assign(output_elements(i), bf16_t{0x7FC0});  // NaN: anything left unwritten shows
  const auto& step = std::get<plan::ConvStep>(plan_.steps[i]);
  return {step, plan_.contexts[i], inputs_[i], weights_[i], output};
}

std::vector<std::vector<bf16_t>> run_all(replay::ConvDevice& device, const ConvPlanFixture& fixture) {
  std::vector<std::vector<bf16_t>> outputs(fixture.size());
  for (std::size_t i = 0; i < fixture.size(); ++i) device.run(fixture.dispatch(i, outputs[i]));
  return outputs;
}

}  // namespace taconite::npu_test

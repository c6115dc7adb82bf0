// taconite-border-fix-bench: what the border corrections of IR-18's 8 folded unit-leading affines
// cost per batch-1 forward (they run outside oneDNN, so its verbose log cannot show them), in
// the channels-last layout oneDNN 2.6's brgconv picks at batch 1, f32 and bf16. One JSON line.
//   taconite-border-fix-bench [REPEATS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "cpu/affine_fold.hpp"
#include "cpu/border_fix.hpp"

namespace {

using dt = dnnl::memory::data_type;

// IR-18's conv1 of every unit: input channels, output channels, input size (stride 1, pad 1).
struct Conv1 {
  int ic, oc, size;
};
constexpr Conv1 kIr18[] = {{64, 64, 112}, {64, 64, 56}, {64, 128, 56}, {128, 128, 28},
                           {128, 256, 28}, {256, 256, 14}, {256, 512, 14}, {512, 512, 7}};

double median_ms_per_forward(dt type, int repeats) {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  std::vector<taconite::cpu::BorderCorrection> borders;
  std::vector<dnnl::memory> outputs;
  for (const Conv1& c : kIr18) {
    const taconite::cpu::ConvGeometry g{c.oc, c.ic, 3, 1, c.size, c.size};
    borders.push_back(taconite::cpu::border_pixels(g));
    std::fill(borders.back().corrections.begin(), borders.back().corrections.end(), 0.25f);
    const dnnl::memory::desc dst({1, c.oc, c.size, c.size}, type, dnnl::memory::format_tag::acdb);
    outputs.emplace_back(dst, engine);
    std::memset(outputs.back().get_data_handle(), 0, dst.get_size());
  }
  std::vector<taconite::cpu::BorderFix> fixes;
  for (std::size_t i = 0; i < borders.size(); ++i) fixes.emplace_back(borders[i], outputs[i].get_desc());
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < fixes.size(); ++i) fixes[i].apply(outputs[i]);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
  std::printf("{\"bench\": \"border-fix\", \"network\": \"ir18\", \"fixes_per_forward\": 8, \"layout\": \"acdb\", "
              "\"f32_ms_per_forward\": %.4f, \"bf16_ms_per_forward\": %.4f, \"repeats\": %d}\n",
              median_ms_per_forward(dt::f32, repeats), median_ms_per_forward(dt::bf16, repeats), repeats);
  return 0;
}

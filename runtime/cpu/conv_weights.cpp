#include "cpu/conv_weights.hpp"

#include <algorithm>
#include <cstring>

#include "numerics/weight_packing.hpp"

namespace taconite::cpu {

std::vector<bf16_t> merged_conv_weights(const FusedOp& conv, int in_channels, int threads) {
  const std::size_t oc = static_cast<std::size_t>(conv.oc), ict = static_cast<std::size_t>(in_channels);
  const std::size_t taps = static_cast<std::size_t>(conv.kernel) * conv.kernel;
  std::vector<bf16_t> merged(oc * ict * taps, bf16_t{0});
  for (const plan::ConvStep* record : conv.records) {
    const std::size_t icg = static_cast<std::size_t>(record->icg), first_channel = 8 * static_cast<std::size_t>(record->c0);
    const std::size_t groups = oc / 8;
    // The packed layout is [oc/8][icg/8][ky][kx][i8][o8]: each run of output-channel groups is a
    // contiguous slice, so the one unpack function runs on slices in parallel.
#pragma omp parallel num_threads(std::max(threads, 1))
    {
      std::vector<bf16_t> plain(8 * icg * taps);
#pragma omp for schedule(static)
      for (std::size_t og = 0; og < groups; ++og) {
        const numerics::ConvWeightShape shape{8, icg, static_cast<std::size_t>(conv.kernel)};
        numerics::unpack_conv_weights(shape, record->weights.subspan(og * shape.elements(), shape.elements()), plain);
        for (std::size_t o8 = 0; o8 < 8; ++o8)
          std::memcpy(&merged[((og * 8 + o8) * ict + first_channel) * taps], &plain[o8 * icg * taps],
                      icg * taps * sizeof(bf16_t));
      }
    }
  }
  return merged;
}

}  // namespace taconite::cpu

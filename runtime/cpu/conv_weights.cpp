#include "cpu/conv_weights.hpp"

#include <algorithm>

#include "common/per_thread_scratch.hpp"
#include "numerics/weight_packing.hpp"

namespace taconite::cpu {

namespace {
inline void store(bf16_t value, bf16_t& out) { out = value; }
inline void store(bf16_t value, float& out) { out = numerics::bf16_to_f32(value); }
}  // namespace

template <typename T>
void merge_conv_weights(const FusedOp& conv, int in_channels, std::span<T> merged, int threads) {
  const std::size_t oc = static_cast<std::size_t>(conv.oc), ict = static_cast<std::size_t>(in_channels);
  const std::size_t taps = static_cast<std::size_t>(conv.kernel) * conv.kernel;
  std::size_t covered = 0;
  for (const plan::ConvStep* record : conv.records) covered += static_cast<std::size_t>(record->icg);
  if (covered != ict) std::fill(merged.begin(), merged.end(), T{0});  // groups are disjoint (plan check)
  for (const plan::ConvStep* record : conv.records) {
    const std::size_t icg = static_cast<std::size_t>(record->icg), first_channel = 8 * static_cast<std::size_t>(record->c0);
    const std::size_t groups = oc / 8;
    // The packed layout is [oc/8][icg/8][ky][kx][i8][o8]: each output-channel group is a
    // contiguous slice, so the one unpack function runs on slices in parallel.
    PerThreadScratch<bf16_t> scratch(threads, 8 * icg * taps);
#pragma omp parallel num_threads(std::max(threads, 1))
    {
      const std::span<bf16_t> plain = scratch.mine();
#pragma omp for schedule(static)
      for (std::size_t og = 0; og < groups; ++og) {
        const numerics::ConvWeightShape shape{8, icg, static_cast<std::size_t>(conv.kernel)};
        numerics::unpack_conv_weights(shape, record->weights.subspan(og * shape.elements(), shape.elements()), plain);
        for (std::size_t o8 = 0; o8 < 8; ++o8) {
          T* row = &merged[((og * 8 + o8) * ict + first_channel) * taps];
          const bf16_t* from = &plain[o8 * icg * taps];
          for (std::size_t i = 0; i < icg * taps; ++i) store(from[i], row[i]);
        }
      }
    }
  }
}

template void merge_conv_weights<bf16_t>(const FusedOp&, int, std::span<bf16_t>, int);
template void merge_conv_weights<float>(const FusedOp&, int, std::span<float>, int);

}  // namespace taconite::cpu

#include "replay/cpu_reference_device.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "numerics/tiled_layout.hpp"
#include "numerics/weight_packing.hpp"
#include "replay/direct_conv.hpp"

namespace taconite::replay {

namespace {

using numerics::bf16_t;

class CpuReferenceDevice final : public ConvDevice {
 public:
  explicit CpuReferenceDevice(int threads) : threads_(threads) {}
  std::string name() const override { return "cpu-reference"; }

  void run(const ConvDispatch& d) override {
    const plan::ConvStep& s = d.step;
    const numerics::ConvWeightShape shape{static_cast<std::size_t>(s.oc), static_cast<std::size_t>(s.icg),
                                          static_cast<std::size_t>(s.kernel)};
    // The one unpack function (spec §5.3), then f32 for the kernel.
    oihw_.resize(shape.elements());
    numerics::unpack_conv_weights(shape, d.weights, oihw_);
    weights_.resize(shape.elements());
    std::transform(oihw_.begin(), oihw_.end(), weights_.begin(), numerics::bf16_to_f32);

    const ConvGeometry g{s.icg, s.oc, s.h, s.w, s.kernel};
    planar_input_from_tiled(d.input, g, s.wp, input_);
    output_.resize(static_cast<std::size_t>(s.oc) * s.h * s.w);
    direct_conv(g, input_, weights_, output_, threads_);

    std::fill(d.output.begin(), d.output.end(), bf16_t{0});
    const std::size_t oc = static_cast<std::size_t>(s.oc), owp = static_cast<std::size_t>(s.owp);
    for (std::size_t o = 0; o < oc; ++o)
      for (std::size_t y = 0; y < static_cast<std::size_t>(s.oh); ++y)
        for (std::size_t x = 0; x < static_cast<std::size_t>(s.ow); ++x)
          d.output[numerics::tiled_index(oc, owp, o, y, x)] =
              numerics::f32_to_bf16(output_[(o * s.h + y) * s.w + x]);
  }

 private:
  int threads_;
  std::vector<bf16_t> oihw_;
  std::vector<float> weights_, input_, output_;
};

}  // namespace

std::unique_ptr<ConvDevice> make_cpu_reference_device(int threads) {
  return std::make_unique<CpuReferenceDevice>(threads);
}

}  // namespace taconite::replay

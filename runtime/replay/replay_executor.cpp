#include "replay/replay_executor.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "numerics/host_glue.hpp"
#include "replay/fused_units.hpp"

namespace taconite::replay {

namespace {

using numerics::bf16_t;
using numerics::TiledShape;

TiledShape shape_of(const plan::Dims& d) { return {d.c, d.h, d.w}; }

// Below this many elements a parallel region costs more than it saves.
constexpr std::size_t kParallelThreshold = 1 << 15;

// Image rows [y0, y1): the unit of the executor's parallel, fused loops.
struct Band {
  std::size_t y0, y1;
  std::size_t rows() const { return y1 - y0; }
};

// The band's part of a tiled buffer with `row_elements` elements per image row.
template <typename T>
std::span<T> band_of(std::span<T> buffer, Band band, std::size_t row_elements) {
  return buffer.subspan(band.y0 * row_elements, band.rows() * row_elements);
}

class ReplayExecutor final : public Executor {
 public:
  ReplayExecutor(const plan::Plan& plan, std::unique_ptr<ConvDevice> device, int threads)
      : plan_(plan), device_(std::move(device)), threads_(threads), units_(group_replay_units(plan)) {
    slots_.reserve(plan.slot_elements.size());
    for (std::size_t elements : plan.slot_elements) slots_.emplace_back(elements);
    slice_.resize(plan.max_slice_elements);
    for (auto& buffer : dispatch_buffers_) buffer.resize(plan.max_dispatch_elements);
    accumulator_.resize(plan.max_dispatch_elements);
    const plan::HeadStep& head = plan.head();
    head_weights_.emplace(head.weights_t, head.k, head.n);
  }

  std::string backend() const override { return device_->name(); }

  std::vector<float> forward(std::span<const bf16_t> input) override {
    std::vector<float> embedding(static_cast<std::size_t>(plan_.embed_dim));
    for (const ReplayUnit& unit : units_) {
      const plan::Step& first = plan_.steps[unit.first];
      if (!unit.banded) {
        std::visit([&](const auto& s) { run(s, input, embedding); }, first);
        continue;
      }
      if (const auto* conv = std::get_if<plan::ConvStep>(&first)) dispatch(*conv);
      for_each_band(unit.dims.h, unit.dims.elements(), [&](Band band) {
        for (std::size_t i = unit.first; i < unit.end; ++i)
          std::visit([&](const auto& s) { run_band(s, band); }, plan_.steps[i]);
      });
    }
    return embedding;
  }

 private:
  std::span<bf16_t> slot(plan::Slot s, std::size_t elements) { return {slots_[static_cast<std::size_t>(s)].data(), elements}; }
  std::span<bf16_t> slot_band(plan::Slot s, const plan::Dims& d, Band band) {
    return band_of(slot(s, d.elements()), band, static_cast<std::size_t>(d.c) * d.w);
  }

  // Runs fn(band) over bands covering rows [0, h), in parallel when `elements` make it pay.
  template <typename Fn>
  void for_each_band(int h, std::size_t elements, Fn&& fn) {
    const int used = elements < kParallelThreshold ? 1 : std::max(threads_, 1);
#pragma omp parallel for num_threads(used) schedule(static)
    for (int y = 0; y < h; ++y) fn(Band{static_cast<std::size_t>(y), static_cast<std::size_t>(y) + 1});
  }

  // A conv record: slice its input channel groups and run the dispatch. Records alternate between
  // two output buffers; the first is left where it is, the second (of three or more) starts the f32
  // sum with it, later ones add to the sum. The last record is finished in its banded unit.
  void dispatch(const plan::ConvStep& s) {
    const TiledShape in_shape{s.ict, s.h, s.w};
    const std::size_t slice_elements = static_cast<std::size_t>(s.h) * s.icg * s.wp;
    const std::size_t out_elements = static_cast<std::size_t>(s.oh) * s.oc * s.owp;
    std::span<bf16_t> slice = device_->staging_input(slice_elements);
    if (slice.empty()) slice = {slice_.data(), slice_elements};
    record_ = s.first ? 0 : record_ + 1;
    const int which = record_ % 2;
    std::span<bf16_t> output = device_->staging_output(out_elements, which);
    if (output.empty()) output = {dispatch_buffers_[which].data(), out_elements};
    outputs_[which] = output;

    const std::span<const bf16_t> in = slot(s.in, in_shape.elements());
    const std::size_t in_row = static_cast<std::size_t>(s.ict) * s.w, slice_row = static_cast<std::size_t>(s.icg) * s.wp;
    for_each_band(s.h, slice_elements, [&](Band band) {
      numerics::slice_channel_groups(band_of(in, band, in_row), {s.ict, static_cast<int>(band.rows()), s.w}, s.c0,
                                     s.icg, s.wp, band_of(slice, band, slice_row));
    });
    device_->run(ConvDispatch{s, plan_.contexts[static_cast<std::size_t>(s.context)], slice, s.weights, output});
    if (s.last || record_ == 0) return;
    const std::size_t out_row = static_cast<std::size_t>(s.oc) * s.owp;
    const std::span<float> sum(accumulator_.data(), out_elements);
    for_each_band(s.oh, out_elements, [&](Band band) {
      if (record_ == 1) numerics::sum_records(band_of(outputs_[0], band, out_row), band_of(output, band, out_row), band_of(sum, band, out_row));
      else numerics::accumulate(band_of(output, band, out_row), band_of(sum, band, out_row));
    });
  }

  // --- Steps replayed whole ---
  void run(const plan::InputStep& s, std::span<const bf16_t> input, std::vector<float>&) {
    std::copy(input.begin(), input.end(), slot(s.buf, s.dims.elements()).begin());
  }

  void run(const plan::ConvStep& s, std::span<const bf16_t>, std::vector<float>&) { dispatch(s); }

  void run(const plan::SubsampleStep& s, std::span<const bf16_t>, std::vector<float>&) {
    numerics::subsample(slot(s.in, s.dims.elements()), slot(s.out, s.out_dims().elements()), shape_of(s.dims), s.stride);
  }

  void run(const plan::HeadStep& s, std::span<const bf16_t>, std::vector<float>& embedding) {
    numerics::head(slot(s.in, s.dims.elements()), shape_of(s.dims), *head_weights_, s.bias, embedding, threads_);
  }

  template <typename ElementwiseStep>  // only ever replayed in banded units
  void run(const ElementwiseStep&, std::span<const bf16_t>, std::vector<float>&) {}

  // --- Steps replayed band by band ---
  void run_band(const plan::ConvStep& s, Band band) {  // the last record: finish the conv's output rows
    const std::size_t out_row = static_cast<std::size_t>(s.oc) * s.owp;
    numerics::EarlierRecords earlier;
    if (record_ == 1) earlier.first = band_of(std::span<const bf16_t>(outputs_[0]), band, out_row);
    if (record_ >= 2) earlier.sum = band_of(std::span<const float>(accumulator_), band, out_row);
    numerics::finish_conv(earlier, band_of(std::span<const bf16_t>(outputs_[record_ % 2]), band, out_row), s.oc,
                          static_cast<int>(band.rows()), s.ow, s.owp, slot_band(s.out, {s.oc, s.oh, s.ow}, band));
  }

  void run_band(const plan::AffineStep& s, Band band) {
    numerics::affine(slot_band(s.in, s.dims, band), slot_band(s.out, s.dims, band), band_shape(s.dims, band), s.scale,
                     s.shift);
  }

  void run_band(const plan::PreluBiasStep& s, Band band) {
    numerics::prelu_bias(slot_band(s.buf, s.dims, band), band_shape(s.dims, band), s.alpha, s.bias);
  }

  void run_band(const plan::BiasStep& s, Band band) {
    numerics::bias(slot_band(s.buf, s.dims, band), band_shape(s.dims, band), s.bias);
  }

  void run_band(const plan::AddStep& s, Band band) {
    numerics::add(slot_band(s.a, s.dims, band), slot_band(s.b, s.dims, band), slot_band(s.out, s.dims, band));
  }

  template <typename WholeStep>  // never in a banded unit
  void run_band(const WholeStep&, Band) {}

  static TiledShape band_shape(const plan::Dims& d, Band band) { return {d.c, static_cast<int>(band.rows()), d.w}; }

  const plan::Plan& plan_;
  std::unique_ptr<ConvDevice> device_;
  int threads_;
  std::vector<ReplayUnit> units_;
  std::vector<std::vector<bf16_t>> slots_;
  std::vector<bf16_t> slice_, dispatch_buffers_[2];  // used when the device lends no buffers
  int record_ = 0;                     // index of the current conv record within its conv
  std::span<bf16_t> outputs_[2];       // where records with even / odd index wrote
  std::vector<float> accumulator_;     // f32 sum of a conv's records, from the second of three on
  std::optional<numerics::HeadWeights> head_weights_;  // the plan's one head, regrouped at load
};

}  // namespace

std::unique_ptr<Executor> make_replay_executor(const plan::Plan& plan, std::unique_ptr<ConvDevice> device,
                                               int threads) {
  return std::make_unique<ReplayExecutor>(plan, std::move(device), threads);
}

}  // namespace taconite::replay

#include "replay/replay_executor.hpp"

#include <algorithm>
#include <mutex>
#include <optional>
#include <vector>

#include "numerics/host_glue.hpp"
#include "replay/cpu_reference_device.hpp"
#include "replay/fused_units.hpp"
#include "taconite/model.hpp"

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

// What every session of one replay backend shares: read-only after construction.
struct ReplayShared {
  ReplayShared(const plan::Plan& p, int t) : plan(p), threads(t), units(group_replay_units(p)) {
    const plan::HeadStep& head = p.head();
    head_weights.emplace(head.weights_t, head.k, head.n);
  }
  const plan::Plan& plan;
  int threads;
  std::vector<ReplayUnit> units;
  std::optional<numerics::HeadWeights> head_weights;  // the plan's one head, regrouped at load
};

// A conv device and the turn its users take: an executor holds the lock for a whole forward, so
// sessions sharing a device (and its lent staging buffers) never interleave.
struct DeviceTurn {
  explicit DeviceTurn(std::unique_ptr<ConvDevice> d) : device(std::move(d)) {}
  std::mutex lock;
  std::unique_ptr<ConvDevice> device;
};

class ReplayExecutor final : public Executor {
 public:
  ReplayExecutor(std::shared_ptr<const ReplayShared> shared, std::shared_ptr<DeviceTurn> turn)
      : shared_(std::move(shared)),
        plan_(shared_->plan),
        turn_(std::move(turn)),
        device_(*turn_->device),
        threads_(shared_->threads),
        units_(shared_->units) {
    const plan::Plan& plan = plan_;
    const std::lock_guard<std::mutex> guard(turn_->lock);  // the device may be serving another session
    slots_.reserve(plan.slot_elements.size());
    for (std::size_t elements : plan.slot_elements) slots_.emplace_back(elements);
    // Argument buffers: the device's own when it lends them (zero copy), else ours.
    staging_ = device_.staging_input(plan.max_slice_elements);
    if (staging_.empty()) {
      own_staging_.resize(plan.max_slice_elements);
      staging_ = own_staging_;
    }
    for (int which = 0; which < 2; ++which) {
      outputs_[which] = device_.staging_output(plan.max_dispatch_elements, which);
      if (outputs_[which].empty()) {
        own_outputs_[which].resize(plan.max_dispatch_elements);
        outputs_[which] = own_outputs_[which];
      }
    }
    accumulator_.resize(plan.max_dispatch_elements);
    // Each record's slice goes after its conv's earlier records' slices, so a whole conv can be staged.
    slice_offsets_.resize(plan.steps.size());
    std::size_t offset = 0;
    for (std::size_t i = 0; i < plan.steps.size(); ++i)
      if (const auto* conv = std::get_if<plan::ConvStep>(&plan.steps[i])) {
        if (conv->first) offset = 0;
        slice_offsets_[i] = offset;
        offset += slice_elements(*conv);
      }
  }

  std::vector<float> forward(std::span<const bf16_t> input) override {
    const std::lock_guard<std::mutex> guard(turn_->lock);
    std::vector<float> embedding(static_cast<std::size_t>(plan_.embed_dim));
    std::size_t sliced_end = 0;  // steps before this one have their input slices cut already
    for (const ReplayUnit& unit : units_) {
      const plan::Step& first = plan_.steps[unit.first];
      if (const auto* conv = std::get_if<plan::ConvStep>(&first)) dispatch(*conv, unit.first, unit.first < sliced_end);
      else if (!unit.banded) std::visit([&](const auto& s) { run(s, input, embedding); }, first);
      if (!unit.banded) continue;
      for_each_band(unit.dims.h, unit.dims.elements(), [&](Band band) {
        for (std::size_t i = unit.first; i < unit.end; ++i)
          std::visit([&](const auto& s) { run_band(s, band); }, plan_.steps[i]);
        for (std::size_t i = unit.end; i < unit.slices_end; ++i) slice_band(std::get<plan::ConvStep>(plan_.steps[i]), i, band);
      });
      sliced_end = unit.slices_end;
    }
    return embedding;
  }

 private:
  std::span<bf16_t> slot(plan::Slot s, std::size_t elements) { return {slots_[static_cast<std::size_t>(s)].data(), elements}; }
  std::span<bf16_t> slot_band(plan::Slot s, const plan::Dims& d, Band band) {
    return band_of(slot(s, d.elements()), band, static_cast<std::size_t>(d.c) * d.w);
  }

  static std::size_t slice_elements(const plan::ConvStep& s) { return static_cast<std::size_t>(s.h) * s.icg * s.wp; }
  std::span<bf16_t> slice_of(const plan::ConvStep& s, std::size_t index) {
    return staging_.subspan(slice_offsets_[index], slice_elements(s));
  }

  // Runs fn(band) over bands covering rows [0, h), in parallel when `elements` make it pay.
  template <typename Fn>
  void for_each_band(int h, std::size_t elements, Fn&& fn) {
    const int used = elements < kParallelThreshold ? 1 : std::max(threads_, 1);
#pragma omp parallel for num_threads(used) schedule(static)
    for (int y = 0; y < h; ++y) fn(Band{static_cast<std::size_t>(y), static_cast<std::size_t>(y) + 1});
  }

  // Rows `band` of conv record `index`'s input slice.
  void slice_band(const plan::ConvStep& s, std::size_t index, Band band) {
    const std::span<const bf16_t> in = slot(s.in, static_cast<std::size_t>(s.ict) * s.h * s.w);
    numerics::slice_channel_groups(band_of(in, band, static_cast<std::size_t>(s.ict) * s.w),
                                   {s.ict, static_cast<int>(band.rows()), s.w}, s.c0, s.icg, s.wp,
                                   band_of(slice_of(s, index), band, static_cast<std::size_t>(s.icg) * s.wp));
  }

  // Conv record `index` (steps[index] == s): slice its input channel groups unless a unit before
  // did (`sliced`), and run the dispatch. Records alternate between the two output buffers: the
  // first is left where it is, the second (of three or more) starts the f32 sum with it, later ones
  // add to the sum. The last record is finished in its banded unit.
  void dispatch(const plan::ConvStep& s, std::size_t index, bool sliced) {
    if (!sliced)
      for_each_band(s.h, slice_elements(s), [&](Band band) { slice_band(s, index, band); });
    record_ = s.first ? 0 : record_ + 1;
    const std::size_t out_elements = static_cast<std::size_t>(s.oh) * s.oc * s.owp;
    const std::span<bf16_t> output = outputs_[record_ % 2].first(out_elements);
    device_.run(
        ConvDispatch{s, plan_.contexts[static_cast<std::size_t>(s.context)], slice_of(s, index), s.weights, output});
    if (s.last || record_ == 0) return;
    const std::size_t out_row = static_cast<std::size_t>(s.oc) * s.owp;
    const std::span<float> sum(accumulator_.data(), out_elements);
    for_each_band(s.oh, out_elements, [&](Band band) {
      if (record_ == 1)
        numerics::sum_records(band_of(outputs_[0], band, out_row), band_of(output, band, out_row), band_of(sum, band, out_row));
      else
        numerics::accumulate(band_of(output, band, out_row), band_of(sum, band, out_row));
    });
  }

  // --- Steps replayed whole ---
  void run(const plan::InputStep& s, std::span<const bf16_t> input, std::vector<float>&) {
    std::copy(input.begin(), input.end(), slot(s.buf, s.dims.elements()).begin());
  }

  void run(const plan::SubsampleStep& s, std::span<const bf16_t>, std::vector<float>&) {
    numerics::subsample(slot(s.in, s.dims.elements()), slot(s.out, s.out_dims().elements()), shape_of(s.dims), s.stride);
  }

  void run(const plan::HeadStep& s, std::span<const bf16_t>, std::vector<float>& embedding) {
    numerics::head(slot(s.in, s.dims.elements()), shape_of(s.dims), *shared_->head_weights, s.bias, embedding,
                   threads_);
  }

  template <typename Step>  // convs go through dispatch(); elementwise steps are always banded
  void run(const Step&, std::span<const bf16_t>, std::vector<float>&) {}

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

  std::shared_ptr<const ReplayShared> shared_;
  const plan::Plan& plan_;
  std::shared_ptr<DeviceTurn> turn_;
  ConvDevice& device_;
  int threads_;
  const std::vector<ReplayUnit>& units_;
  std::vector<std::vector<bf16_t>> slots_;
  std::span<bf16_t> staging_;           // every input slice of one conv, record after record
  std::span<bf16_t> outputs_[2];        // dispatch outputs of records with even / odd index
  std::vector<bf16_t> own_staging_, own_outputs_[2];  // when the device lends no buffers
  std::vector<std::size_t> slice_offsets_;  // by step index: a conv record's slice in staging_
  int record_ = 0;                      // index of the current conv record within its conv
  std::vector<float> accumulator_;      // f32 sum of a conv's records, from the second of three on
};

// Sessions of the exact replay each get a cpu-reference device: its scratch is per-call state.
class ExactReplayBackend final : public PreparedBackend {
 public:
  ExactReplayBackend(const plan::Plan& plan, int threads) : shared_(std::make_shared<ReplayShared>(plan, threads)) {}
  std::string precision() const override { return std::string(kPrecisionBf16Exact); }
  std::unique_ptr<Executor> new_executor() const override {
    return std::make_unique<ReplayExecutor>(shared_,
                                            std::make_shared<DeviceTurn>(make_cpu_reference_device(shared_->threads)));
  }

 private:
  std::shared_ptr<const ReplayShared> shared_;
};

// Sessions of an NPU replay share its one device: resident contexts, uploaded weights, one queue.
class DeviceReplayBackend final : public PreparedBackend {
 public:
  DeviceReplayBackend(const plan::Plan& plan, std::unique_ptr<ConvDevice> device, int threads)
      : shared_(std::make_shared<ReplayShared>(plan, threads)),
        turn_(std::make_shared<DeviceTurn>(std::move(device))) {}
  std::string precision() const override { return std::string(kPrecisionBf16Exact); }
  std::unique_ptr<Executor> new_executor() const override { return std::make_unique<ReplayExecutor>(shared_, turn_); }

 private:
  std::shared_ptr<const ReplayShared> shared_;
  std::shared_ptr<DeviceTurn> turn_;
};

}  // namespace

std::unique_ptr<PreparedBackend> make_exact_replay_backend(const plan::Plan& plan, int threads) {
  return std::make_unique<ExactReplayBackend>(plan, threads);
}

std::unique_ptr<PreparedBackend> make_device_replay_backend(const plan::Plan& plan, std::unique_ptr<ConvDevice> device,
                                                            int threads) {
  return std::make_unique<DeviceReplayBackend>(plan, std::move(device), threads);
}

std::unique_ptr<Executor> make_replay_executor(const plan::Plan& plan, std::unique_ptr<ConvDevice> device,
                                               int threads) {
  return std::make_unique<ReplayExecutor>(std::make_shared<ReplayShared>(plan, threads),
                                          std::make_shared<DeviceTurn>(std::move(device)));
}

}  // namespace taconite::replay

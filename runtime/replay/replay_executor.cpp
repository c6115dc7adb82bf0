#include "replay/replay_executor.hpp"

#include <algorithm>
#include <vector>

#include "numerics/host_glue.hpp"

namespace taconite::replay {

namespace {

using numerics::bf16_t;
using numerics::TiledShape;

TiledShape shape_of(const plan::Dims& d) { return {d.c, d.h, d.w}; }

class ReplayExecutor final : public Executor {
 public:
  ReplayExecutor(const plan::Plan& plan, std::unique_ptr<ConvDevice> device, int threads)
      : plan_(plan), device_(std::move(device)), threads_(threads) {
    slots_.reserve(plan.slot_elements.size());
    for (std::size_t elements : plan.slot_elements) slots_.emplace_back(elements);
    slice_.resize(plan.max_slice_elements);
    dispatch_out_.resize(plan.max_dispatch_elements);
    accumulator_.resize(plan.max_dispatch_elements);
  }

  std::string backend() const override { return device_->name(); }

  std::vector<float> forward(std::span<const bf16_t> input) override {
    std::vector<float> embedding(static_cast<std::size_t>(plan_.embed_dim));
    for (const plan::Step& step : plan_.steps) std::visit([&](const auto& s) { run(s, input, embedding); }, step);
    return embedding;
  }

 private:
  std::span<bf16_t> slot(plan::Slot s, std::size_t elements) { return {slots_[static_cast<std::size_t>(s)].data(), elements}; }

  void run(const plan::InputStep& s, std::span<const bf16_t> input, std::vector<float>&) {
    std::copy(input.begin(), input.end(), slot(s.buf, s.dims.elements()).begin());
  }

  void run(const plan::ConvStep& s, std::span<const bf16_t>, std::vector<float>&) {
    const TiledShape in_shape{s.ict, s.h, s.w};
    const std::size_t slice_elements = static_cast<std::size_t>(s.h) * s.icg * s.wp;
    const std::size_t out_elements = static_cast<std::size_t>(s.oh) * s.oc * s.owp;
    std::span<bf16_t> slice = device_->staging_input(slice_elements);
    if (slice.empty()) slice = {slice_.data(), slice_elements};
    std::span<bf16_t> dispatch_out = device_->staging_output(out_elements);
    if (dispatch_out.empty()) dispatch_out = {dispatch_out_.data(), out_elements};
    numerics::slice_channel_groups(slot(s.in, in_shape.elements()), in_shape, s.c0, s.icg, s.wp, slice);
    device_->run(ConvDispatch{s, plan_.contexts[static_cast<std::size_t>(s.context)], slice, s.weights, dispatch_out});
    const std::span<bf16_t> out = s.last ? slot(s.out, static_cast<std::size_t>(s.oc) * s.oh * s.ow) : std::span<bf16_t>{};
    if (s.first && s.last) {  // nothing to sum: skip the f32 accumulator
      numerics::crop_single_dispatch(dispatch_out, s.oc, s.oh, s.ow, s.owp, out);
      return;
    }
    const std::span<float> acc(accumulator_.data(), out_elements);
    numerics::accumulate(dispatch_out, acc, s.first, threads_);
    if (s.last) numerics::finish_conv(acc, s.oc, s.oh, s.ow, s.owp, out);
  }

  void run(const plan::AffineStep& s, std::span<const bf16_t>, std::vector<float>&) {
    const std::size_t n = s.dims.elements();
    numerics::affine(slot(s.in, n), slot(s.out, n), shape_of(s.dims), s.scale, s.shift, threads_);
  }

  void run(const plan::PreluBiasStep& s, std::span<const bf16_t>, std::vector<float>&) {
    numerics::prelu_bias(slot(s.buf, s.dims.elements()), shape_of(s.dims), s.alpha, s.bias, threads_);
  }

  void run(const plan::BiasStep& s, std::span<const bf16_t>, std::vector<float>&) {
    numerics::bias(slot(s.buf, s.dims.elements()), shape_of(s.dims), s.bias, threads_);
  }

  void run(const plan::SubsampleStep& s, std::span<const bf16_t>, std::vector<float>&) {
    const std::span<bf16_t> in = slot(s.in, s.dims.elements());
    const std::size_t out_elements = s.out_dims().elements();
    if (s.in == s.out) {  // in place: read from a copy
      scratch_.assign(in.begin(), in.end());
      numerics::subsample(scratch_, slot(s.out, out_elements), shape_of(s.dims), s.stride);
    } else {
      numerics::subsample(in, slot(s.out, out_elements), shape_of(s.dims), s.stride);
    }
  }

  void run(const plan::AddStep& s, std::span<const bf16_t>, std::vector<float>&) {
    const std::size_t n = s.dims.elements();
    numerics::add(slot(s.a, n), slot(s.b, n), slot(s.out, n), n, threads_);
  }

  void run(const plan::HeadStep& s, std::span<const bf16_t>, std::vector<float>& embedding) {
    numerics::head(slot(s.in, s.dims.elements()), shape_of(s.dims), s.weights_t, s.bias, s.n, embedding, threads_);
  }

  const plan::Plan& plan_;
  std::unique_ptr<ConvDevice> device_;
  int threads_;
  std::vector<std::vector<bf16_t>> slots_;
  std::vector<bf16_t> slice_, dispatch_out_, scratch_;
  std::vector<float> accumulator_;
};

}  // namespace

std::unique_ptr<Executor> make_replay_executor(const plan::Plan& plan, std::unique_ptr<ConvDevice> device,
                                               int threads) {
  return std::make_unique<ReplayExecutor>(plan, std::move(device), threads);
}

}  // namespace taconite::replay

#include "cpu/weight_store.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

#include "cpu/conv_weights.hpp"
#include "cpu/int8_scales.hpp"

namespace taconite::cpu {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

namespace {

// The bundle's packed weights are read once, here; afterwards only their re-laid-out copy is
// used. Dropping the mapped pages (a private read-only file mapping: a later read during the load
// would simply fault them in again from the file) keeps the resident set near one copy of the
// weights. After the load the whole mapping is released (PreparedBackend::reads_bundle_tensors).
void release_mapped_pages(const void* data, std::size_t bytes) {
  const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) / page * page;
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(data) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);  // advice only: failure is harmless
}

void copy_reorder(dnnl::engine& engine, dnnl::memory from, dnnl::memory to, const dnnl::primitive_attr& attr = {}) {
  dnnl::stream stream(engine);
  dnnl::reorder(dnnl::reorder::primitive_desc(from, to, attr)).execute(stream, from, to);
  stream.wait();
}

}  // namespace

WeightStore::WeightStore(const FusedGraph& graph, dnnl::engine engine, dt weight_type, int threads,
                         WeightContents contents)
    : graph_(graph), engine_(std::move(engine)), weight_type_(weight_type), threads_(threads), contents_(contents) {
  for (std::size_t i = 0; i < graph.ops.size(); ++i)
    if (graph.ops[i].kind == OpKind::Conv) last_conv_ = static_cast<int>(i);
}

dnnl::memory WeightStore::keep(dnnl::memory m) {
  bytes_ += m.get_desc().get_size();
  return m;
}

std::size_t WeightStore::bytes() const {
  const std::lock_guard<std::mutex> guard(lock_);
  return bytes_;
}

dnnl::memory WeightStore::weights(int op, const dnnl::memory::desc& want) {
  const std::lock_guard<std::mutex> guard(lock_);
  std::vector<dnnl::memory>& layouts = weights_[op];
  for (const dnnl::memory& m : layouts)
    if (m.get_desc() == want) return m;
  if (contents_ == WeightContents::Placeholder) {
    layouts.push_back(placeholder_weights(op, want));
    return layouts.back();
  }
  dnnl::memory made = layouts.empty() ? first_weights(op, want) : dnnl::memory(want, engine_);
  if (!layouts.empty()) copy_reorder(engine_, layouts.front(), made);
  layouts.push_back(keep(made));
  return made;
}

// From the bundle, in plain layouts of the compute type, then one oneDNN reorder (a fast jitted
// one: plain f32/bf16 to blocked) into the primitive's layout. Conv records are unpacked and
// merged to OIHW; the head's bT is used in its own order.
dnnl::memory WeightStore::first_weights(int op, const dnnl::memory::desc& want) {
  const FusedOp& o = graph_.ops[static_cast<std::size_t>(op)];
  const plan::Dims& in = graph_.values[static_cast<std::size_t>(o.inputs[0])];
  dnnl::memory made(want, engine_);
  if (o.kind == OpKind::Conv) {
    const dnnl::memory::desc plain({o.oc, in.c, o.kernel, o.kernel}, plain_type(), tag::abcd);
    const std::size_t elements = static_cast<std::size_t>(o.oc) * in.c * o.kernel * o.kernel;
    void* data = scratch_op_ == op ? scratch_.data() : plain_conv_weights(op, o, in.c, elements);
    dnnl::primitive_attr attr;  // s8: the reorder multiplies by the scales and rounds (oneDNN's compensation included)
    if (want.data_type() == dt::s8) attr.set_output_scales(1 << 0, int8_scales_.at(op));
    copy_reorder(engine_, dnnl::memory(plain, engine_, data), made, attr);
    for (const plan::ConvStep* record : o.records) release_mapped_pages(record->weights.data(), record->weights.size_bytes());
    scratch_op_ = -1;
    if (op == last_conv_) scratch_ = {}, narrowed_ = {};  // the last conv's weights are in: free the scratch
    return made;
  }
  // bT [k][n] with k = (c*h + y)*w + x is the {n, c, h, w} tensor laid out c, h, w, n: `bcda`.
  // In the type the head computes in: bf16 also in f32's Winograd variant (FusedOp::bf16_input).
  const std::span<const bf16_t> bt = o.head->weights_t;
  const bool bf16_head = want.data_type() == dt::bf16;
  const dnnl::memory::desc plain({static_cast<dnnl::memory::dim>(o.head->n), in.c, in.h, in.w},
                                 bf16_head ? dt::bf16 : dt::f32, tag::bcda);
  if (bf16_head) {
    // oneDNN takes a non-const handle; a reorder only reads its source (the read-only mapping).
    copy_reorder(engine_, dnnl::memory(plain, engine_, const_cast<bf16_t*>(bt.data())), made);
  } else {
    std::vector<float> widened(bt.size());
#pragma omp parallel for num_threads(std::max(threads_, 1)) schedule(static)
    for (std::size_t i = 0; i < bt.size(); ++i) widened[i] = numerics::bf16_to_f32(bt[i]);
    copy_reorder(engine_, dnnl::memory(plain, engine_, widened.data()), made);
  }
  release_mapped_pages(bt.data(), bt.size_bytes());
  return made;
}

dt WeightStore::plain_type() const { return weight_type_ == dt::s8 ? dt::f32 : weight_type_; }

std::vector<float> WeightStore::conv_weight_scales(int op, std::span<const float> input_multipliers) {
  const std::lock_guard<std::mutex> guard(lock_);
  const auto found = int8_scales_.find(op);
  if (found != int8_scales_.end()) return found->second;
  const FusedOp& o = graph_.ops[static_cast<std::size_t>(op)];
  if (contents_ == WeightContents::Placeholder) return int8_scales_[op] = std::vector<float>(static_cast<std::size_t>(o.oc), 1.0f);
  const plan::Dims& in = graph_.values[static_cast<std::size_t>(o.inputs[0])];
  const std::size_t taps = static_cast<std::size_t>(o.kernel) * o.kernel;
  const std::size_t elements = static_cast<std::size_t>(o.oc) * in.c * taps;
  plain_conv_weights(op, o, in.c, elements);
  scratch_op_ = op;  // first_weights(op) quantizes this copy instead of reading the bundle again
  const std::span<float> oihw(scratch_.data(), elements);
  if (input_multipliers.size() == static_cast<std::size_t>(in.c))
    for (std::size_t i = 0; i < elements; ++i) oihw[i] /= input_multipliers[i / taps % static_cast<std::size_t>(in.c)];
  return int8_scales_[op] = weight_scales(oihw, o.oc);
}

void* WeightStore::plain_conv_weights(int op, const FusedOp& o, int in_channels, std::size_t elements) {
  // One scratch buffer reused by every conv (no fresh pages to fault in per conv).
  if (scratch_.size() < elements) scratch_.resize(elements);
  const bool bf16 = weight_type_ == dt::bf16;
  if (o.in_scale.empty()) {
    if (bf16) {
      merge_conv_weights(o, in_channels, std::span(reinterpret_cast<bf16_t*>(scratch_.data()), elements), threads_);
    } else {
      merge_conv_weights(o, in_channels, std::span(scratch_.data(), elements), threads_);
    }
    return scratch_.data();
  }
  // The input affine is folded in f32 (bf16 weights times an f32 scale), then rounded once to
  // the compute type.
  const std::span<float> oihw(scratch_.data(), elements);
  merge_conv_weights(o, in_channels, oihw, threads_);
  const auto widened = [](std::span<const bf16_t> v) {
    std::vector<float> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = numerics::bf16_to_f32(v[i]);
    return out;
  };
  const plan::Dims& in = graph_.values[static_cast<std::size_t>(o.inputs[0])];
  const ConvGeometry geometry{o.oc, in_channels, o.kernel, o.stride, in.h, in.w};
  record_fold(op, fold_input_affine(geometry, oihw, widened(o.in_scale), widened(o.in_shift), widened(o.bias)));
  if (!bf16) return scratch_.data();
  narrowed_.resize(elements);
  for (std::size_t i = 0; i < elements; ++i) narrowed_[i] = numerics::f32_to_bf16(oihw[i]);
  return narrowed_.data();
}

void WeightStore::record_fold(int op, AffineFold terms) {
  Fold& fold = folds_[op];
  fold.terms = std::move(terms);
  fold.bias = keep(dnnl::memory({{static_cast<dnnl::memory::dim>(fold.terms.bias.size())}, dt::f32, tag::a}, engine_));
  std::copy(fold.terms.bias.begin(), fold.terms.bias.end(), static_cast<float*>(fold.bias.get_data_handle()));
}

// Zeros: no denormals, and oneDNN's convolution and inner-product kernels take the same time
// whatever the values. Written, not just allocated: untouched pages would all map the one zero
// page and make the weights' memory traffic look free. One buffer per layout, shared by the ops
// of that shape: filling fresh pages is what a load spends most of its time on (this shared VM:
// 4-7 ms per MiB), and IR-101's 102 convs have 11 weight shapes. The cost: a repeated shape's
// weights may come from cache instead of memory, for both candidates alike.
dnnl::memory WeightStore::placeholder_weights(int op, const dnnl::memory::desc& want) {
  dnnl::memory made;
  for (const dnnl::memory& m : placeholders_)
    if (m.get_desc() == want) made = m;
  if (!made) {
    made = keep(dnnl::memory(want, engine_));
    std::memset(made.get_data_handle(), 0, want.get_size());
    placeholders_.push_back(made);
  }
  const FusedOp& o = graph_.ops[static_cast<std::size_t>(op)];
  if (!o.in_scale.empty() && folds_.count(op) == 0) {
    const plan::Dims& in = graph_.values[static_cast<std::size_t>(o.inputs[0])];
    const ConvGeometry geometry{o.oc, in.c, o.kernel, o.stride, in.h, in.w};
    record_fold(op, {std::vector<float>(static_cast<std::size_t>(o.oc), 0.0f), border_pixels(geometry)});
  }
  return made;
}

WeightStore::ConvConstants WeightStore::conv(int op, const dnnl::memory::desc& want) {
  ConvConstants constants{weights(op, want), {}, nullptr};  // the first call also folds the input affine
  const FusedOp& o = graph_.ops[static_cast<std::size_t>(op)];
  if (!o.in_scale.empty()) {
    const std::lock_guard<std::mutex> guard(lock_);
    const Fold& fold = folds_.at(op);
    constants.bias = fold.bias;
    if (!fold.terms.border.pixels.empty()) constants.border = &fold.terms.border;
  } else if (!o.bias.empty()) {
    constants.bias = channel_vector(o.bias);
  }
  return constants;
}

dnnl::memory WeightStore::channel_vector(std::span<const bf16_t> values) {
  const std::lock_guard<std::mutex> guard(lock_);
  auto [it, inserted] = vectors_.try_emplace({values.data(), 1});
  if (inserted) {
    const dnnl::memory::desc desc({static_cast<dnnl::memory::dim>(values.size())}, dt::f32, tag::a);
    it->second = keep(dnnl::memory(desc, engine_));
    float* out = static_cast<float*>(it->second.get_data_handle());
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = numerics::bf16_to_f32(values[i]);
  }
  return it->second;
}

dnnl::memory WeightStore::channel_tensor(std::span<const bf16_t> values, const dnnl::memory::desc& want) {
  const std::lock_guard<std::mutex> guard(lock_);
  std::vector<dnnl::memory>& layouts = tensors_[values.data()];
  for (const dnnl::memory& m : layouts)
    if (m.get_desc() == want) return m;
  if (!layouts.empty()) {  // another layout of a tensor already made: from that copy, not the bundle
    dnnl::memory made(want, engine_);
    copy_reorder(engine_, layouts.front(), made);
    layouts.push_back(keep(made));
    return made;
  }
  const dnnl::memory::desc plain({1, static_cast<dnnl::memory::dim>(values.size()), 1, 1}, dt::f32, tag::abcd);
  dnnl::memory source(plain, engine_);
  float* out = static_cast<float*>(source.get_data_handle());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = numerics::bf16_to_f32(values[i]);
  if (want == plain) {
    layouts.push_back(keep(source));
  } else {
    dnnl::memory made(want, engine_);
    copy_reorder(engine_, source, made);
    layouts.push_back(keep(made));
  }
  return layouts.back();
}

dnnl::memory WeightStore::head_bias(int op) {
  const std::lock_guard<std::mutex> guard(lock_);
  const std::span<const float> bias = graph_.ops[static_cast<std::size_t>(op)].head->bias;
  auto [it, inserted] = vectors_.try_emplace({bias.data(), 1});
  if (inserted) {
    const dnnl::memory::desc desc({static_cast<dnnl::memory::dim>(bias.size())}, dt::f32, tag::a);
    it->second = keep(dnnl::memory(desc, engine_));
    std::memcpy(it->second.get_data_handle(), bias.data(), bias.size_bytes());
  }
  return it->second;
}

dnnl::memory WeightStore::constant(std::size_t n, float value) {
  const std::lock_guard<std::mutex> guard(lock_);
  auto [it, inserted] = constants_.try_emplace({n, value});
  if (inserted) {
    it->second = keep(dnnl::memory({{static_cast<dnnl::memory::dim>(n)}, dt::f32, tag::a}, engine_));
    float* out = static_cast<float*>(it->second.get_data_handle());
    for (std::size_t i = 0; i < n; ++i) out[i] = value;
  }
  return it->second;
}

}  // namespace taconite::cpu

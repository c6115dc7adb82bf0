#include "cpu/weight_store.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

#include "cpu/conv_weights.hpp"

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

void copy_reorder(dnnl::engine& engine, dnnl::memory from, dnnl::memory to) {
  dnnl::stream stream(engine);
  dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
}
}  // namespace

WeightStore::WeightStore(const FusedGraph& graph, dnnl::engine engine, dt weight_type, int threads)
    : graph_(graph), engine_(std::move(engine)), weight_type_(weight_type), threads_(threads) {
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
  const bool bf16 = weight_type_ == dt::bf16;
  if (o.kind == OpKind::Conv) {
    const dnnl::memory::desc plain({o.oc, in.c, o.kernel, o.kernel}, weight_type_, tag::abcd);
    // One scratch buffer reused by every conv (no fresh pages to fault in per conv).
    const std::size_t elements = static_cast<std::size_t>(o.oc) * in.c * o.kernel * o.kernel;
    if (scratch_.size() < elements) scratch_.resize(elements);
    if (bf16) {
      merge_conv_weights(o, in.c, std::span(reinterpret_cast<bf16_t*>(scratch_.data()), elements), threads_);
    } else {
      merge_conv_weights(o, in.c, std::span(reinterpret_cast<float*>(scratch_.data()), elements), threads_);
    }
    copy_reorder(engine_, dnnl::memory(plain, engine_, scratch_.data()), made);
    for (const plan::ConvStep* record : o.records) release_mapped_pages(record->weights.data(), record->weights.size_bytes());
    if (op == last_conv_) scratch_ = {};  // the last conv's weights are in: free the scratch
    return made;
  }
  // bT [k][n] with k = (c*h + y)*w + x is the {n, c, h, w} tensor laid out c, h, w, n: `bcda`.
  const std::span<const bf16_t> bt = o.head->weights_t;
  const dnnl::memory::desc plain({static_cast<dnnl::memory::dim>(o.head->n), in.c, in.h, in.w}, weight_type_, tag::bcda);
  if (bf16) {
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

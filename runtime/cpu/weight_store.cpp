#include "cpu/weight_store.hpp"

#include <cstring>

#include "cpu/conv_weights.hpp"

namespace taconite::cpu {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

namespace {
void copy_reorder(dnnl::engine& engine, dnnl::memory from, dnnl::memory to) {
  dnnl::stream stream(engine);
  dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
}
}  // namespace

WeightStore::WeightStore(const FusedGraph& graph, dnnl::engine engine, dt weight_type, int threads)
    : graph_(graph), engine_(std::move(engine)), weight_type_(weight_type), threads_(threads) {}

dnnl::memory WeightStore::keep(dnnl::memory m) {
  bytes_ += m.get_desc().get_size();
  return m;
}

dnnl::memory WeightStore::weights(int op, const dnnl::memory::desc& want) {
  std::vector<dnnl::memory>& layouts = weights_[op];
  for (const dnnl::memory& m : layouts)
    if (m.get_desc() == want) return m;
  dnnl::memory made = layouts.empty() ? first_weights(op, want) : dnnl::memory(want, engine_);
  if (!layouts.empty()) copy_reorder(engine_, layouts.front(), made);
  layouts.push_back(keep(made));
  return made;
}

// From the bundle: conv records unpacked and merged to OIHW bf16; the head's bT [k][n] read in
// place as a strided {n, c, h, w} tensor. oneDNN's reorder does the layout (and f32) conversion.
dnnl::memory WeightStore::first_weights(int op, const dnnl::memory::desc& want) {
  const FusedOp& o = graph_.ops[static_cast<std::size_t>(op)];
  const plan::Dims& in = graph_.values[static_cast<std::size_t>(o.inputs[0])];
  dnnl::memory made(want, engine_);
  if (o.kind == OpKind::Conv) {
    std::vector<bf16_t> oihw = merged_conv_weights(o, in.c, threads_);
    const dnnl::memory::desc plain({o.oc, in.c, o.kernel, o.kernel}, dt::bf16, tag::oihw);
    copy_reorder(engine_, dnnl::memory(plain, engine_, oihw.data()), made);
  } else {
    const dnnl::memory::dim n = static_cast<dnnl::memory::dim>(o.head->n);
    const dnnl::memory::desc strided({n, in.c, in.h, in.w}, dt::bf16,
                                     dnnl::memory::dims{1, in.h * in.w * n, in.w * n, n});
    // oneDNN takes a non-const handle; a reorder only reads its source.
    void* bundle_bytes = const_cast<bf16_t*>(o.head->weights_t.data());
    copy_reorder(engine_, dnnl::memory(strided, engine_, bundle_bytes), made);
  }
  return made;
}

dnnl::memory WeightStore::channel_vector(std::span<const bf16_t> values) {
  auto [it, inserted] = vectors_.try_emplace({values.data(), 1});
  if (inserted) {
    const dnnl::memory::desc desc({static_cast<dnnl::memory::dim>(values.size())}, dt::f32, tag::a);
    it->second = keep(dnnl::memory(desc, engine_));
    float* out = static_cast<float*>(it->second.get_data_handle());
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = numerics::bf16_to_f32(values[i]);
  }
  return it->second;
}

dnnl::memory WeightStore::channel_tensor(std::span<const bf16_t> values) {
  auto [it, inserted] = vectors_.try_emplace({values.data(), 4});
  if (inserted) {
    const dnnl::memory::desc desc({1, static_cast<dnnl::memory::dim>(values.size()), 1, 1}, dt::f32, tag::abcd);
    it->second = keep(dnnl::memory(desc, engine_));
    float* out = static_cast<float*>(it->second.get_data_handle());
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = numerics::bf16_to_f32(values[i]);
  }
  return it->second;
}

dnnl::memory WeightStore::head_bias(int op) {
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
  auto [it, inserted] = constants_.try_emplace({n, value});
  if (inserted) {
    it->second = keep(dnnl::memory({{static_cast<dnnl::memory::dim>(n)}, dt::f32, tag::a}, engine_));
    float* out = static_cast<float*>(it->second.get_data_handle());
    for (std::size_t i = 0; i < n; ++i) out[i] = value;
  }
  return it->second;
}

}  // namespace taconite::cpu

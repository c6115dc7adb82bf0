#include "cpu/onednn_network.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "cpu/border_fix.hpp"
#include "cpu/int8_scales.hpp"
#include "numerics/tiled_layout.hpp"

namespace taconite::cpu {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

namespace {

// A primitive argument: an activation (by value id) or a constant memory.
struct ArgRef {
  int value = -1;
  dnnl::memory fixed;
};

// A oneDNN primitive, or (fix set) the border correction of a folded input affine, in place on
// its DNNL_ARG_DST.
struct Step {
  dnnl::primitive primitive;
  std::vector<std::pair<int, ArgRef>> args;
  std::string what;  // "conv jit:avx2" etc.
  std::unordered_map<int, dnnl::memory> bound;
  std::unique_ptr<BorderFix> fix;
  int conv_src = -1;  // a conv's: the value id it reads (f32 networks: calibration)
  dnnl::memory::desc scratchpad{};  // what the primitive needs of the network's shared scratchpad

  void run(dnnl::stream& stream) {
    if (fix) {
      stream.wait();  // the conv that wrote DST has finished (a no-op on oneDNN's in-order CPU stream)
      fix->apply(bound.at(DNNL_ARG_DST));
    } else {
      primitive.execute(stream, bound);
    }
  }
};

struct AlignedBuffer {
  explicit AlignedBuffer(std::size_t n) : bytes((n + 63) / 64 * 64), data(std::aligned_alloc(64, bytes)) {
    if (data == nullptr) throw std::bad_alloc();
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  std::size_t bytes;
  void* data;
};

// `range[c]` = max(range[c], |x|) over channel c of the f32 activation `src`, read in plain nchw
// whatever the conv's layout.
void widen_ranges(const dnnl::engine& engine, dnnl::stream& stream, dnnl::memory src, std::vector<float>& range) {
  const dims shape = src.get_desc().dims();
  dnnl::memory plain({shape, dt::f32, tag::nchw}, engine);
  dnnl::reorder(src, plain).execute(stream, src, plain);
  stream.wait();
  const float* data = static_cast<const float*>(plain.get_data_handle());
  const std::size_t channels = static_cast<std::size_t>(shape[1]), pixels = static_cast<std::size_t>(shape[2] * shape[3]);
  range.resize(channels, 0.0f);
  for (std::size_t n = 0; n < static_cast<std::size_t>(shape[0]); ++n)
    for (std::size_t c = 0; c < channels; ++c, data += pixels)
      for (std::size_t i = 0; i < pixels; ++i) range[c] = std::max(range[c], std::abs(data[i]));
}

}  // namespace

struct OnednnNetwork::Impl {
  const FusedGraph& graph;
  WeightStore& weights;
  dnnl::engine engine;
  dnnl::stream stream;
  bool int8;  // int8 convs on f32 activations
  bool winograd_network;  // some conv asks for Winograd (f32's Winograd variant)
  dt act;
  int batch;
  std::span<const std::vector<float>> input_ranges;  // int8: per value id, per channel

  std::vector<plan::Dims> value_dims;    // per value: the graph's, then the bf16 copies' (below)
  std::vector<dnnl::memory::desc> desc;  // per value; zero until its producer is created
  std::vector<int> alias_of;             // value whose buffer a value reuses (sum post-op), or -1
  // In bf16, the residual stream (every value a sum post-op adds into or writes, and what produces
  // them through layout-keeping ops) stays f32: rounding it to bf16 at each of IR-101's 49 units
  // costs more accuracy than the convs' bf16 inputs (cosine vs fp32 0.99986 instead of >= 0.9999).
  std::vector<bool> wide;
  // f32 value -> its copy in the type convs read (bf16's bf16, int8's s8), made once for them all.
  std::map<int, int> copy_of;
  std::vector<Step> steps;
  std::vector<std::unique_ptr<AlignedBuffer>> buffers;
  std::vector<dnnl::memory> value_memory;
  dnnl::memory user_input, head_output;
  std::size_t embed_dim = 0;
  std::size_t scratchpad_bytes = 0;

  Impl(const FusedGraph& g, WeightStore& w, dnnl::engine e, dt compute, int n, std::span<const std::vector<float>> ranges)
      : graph(g), weights(w), engine(std::move(e)), stream(engine), int8(compute == dt::s8),
        winograd_network(std::ranges::any_of(g.ops, [](const FusedOp& op) { return op.winograd; })),
        act(int8 ? dt::f32 : compute), batch(n), input_ranges(ranges), value_dims(g.values),
        desc(g.values.size()), alias_of(g.values.size(), -1), wide(g.values.size(), false) {
    if (act == dt::bf16) mark_residual_stream();
  }

  dims shape(int value) const {
    const plan::Dims& d = value_dims[static_cast<std::size_t>(value)];
    return {batch, d.c, d.h, d.w};
  }

  // Marks the values a sum post-op reads or writes, then, through the affine, bias and subsample
  // ops producing them (their output keeps their input's type), those ops' inputs.
  void mark_residual_stream() {
    std::vector<int> producer(graph.values.size(), -1);
    for (std::size_t i = 0; i < graph.ops.size(); ++i)
      if (graph.ops[i].output >= 0) producer[static_cast<std::size_t>(graph.ops[i].output)] = static_cast<int>(i);
    std::vector<int> pending;
    for (const FusedOp& op : graph.ops)
      if (op.kind == OpKind::Conv && op.sum_input >= 0) pending.insert(pending.end(), {op.output, op.sum_input});
    while (!pending.empty()) {
      const std::size_t value = static_cast<std::size_t>(pending.back());
      pending.pop_back();
      if (wide[value]) continue;
      wide[value] = true;
      if (producer[value] < 0) continue;
      const FusedOp& op = graph.ops[static_cast<std::size_t>(producer[value])];
      if (op.kind == OpKind::Affine || op.kind == OpKind::Bias || op.kind == OpKind::Subsample || op.kind == OpKind::Add)
        pending.insert(pending.end(), op.inputs.begin(), op.inputs.end());
    }
  }
  dt type_of(int value) const { return wide[static_cast<std::size_t>(value)] ? dt::f32 : act; }

  static dnnl::memory::desc with_type(dnnl::memory::desc d, dt type) {
    d.data.data_type = static_cast<dnnl_data_type_t>(type);
    return d;
  }
  bool is_f32_in_bf16(int value) { return !desc_of(value).is_zero() && desc_of(value).data_type() != act; }
  // The source layout a conv may read `value` in: a bf16 copy's, once one exists, else its pick.
  dnnl::memory::desc conv_src(int value) {
    if (!is_f32_in_bf16(value)) return src_or(value, tag::any);
    const auto copy = copy_of.find(value);
    return copy != copy_of.end() ? desc_of(copy->second) : dnnl::memory::desc(shape(value), act, tag::any);
  }
  // The value a conv or the head reads for `value` in `layout`: itself, or where the types differ
  // (an f32 value read in bf16) its bf16 copy in `layout`.
  int read_as(int value, const dnnl::memory::desc& layout) {
    return desc_of(value).data_type() != layout.data_type() ? reordered_copy(value, layout, {}, "to-bf16") : value;
  }
  // The copy of f32 `value` that convs read, in `layout`: made by a reorder step (with `attr`) placed
  // before the first reader, so before a later sum post-op overwrites the f32 buffer, and shared by
  // the readers after.
  int reordered_copy(int value, const dnnl::memory::desc& layout, const dnnl::primitive_attr& attr, const char* kind) {
    if (const auto found = copy_of.find(value); found != copy_of.end()) return found->second;
    const int copy = static_cast<int>(value_dims.size());
    value_dims.push_back(value_dims[static_cast<std::size_t>(value)]);
    desc.push_back(layout);
    alias_of.push_back(-1);
    wide.push_back(false);
    copy_of[value] = copy;
    const dnnl::reorder::primitive_desc pd(engine, desc_of(value), engine, layout, attr);
    add_step(dnnl::reorder(pd), {{DNNL_ARG_FROM, v(value)}, {DNNL_ARG_TO, v(copy)}}, kind, pd.impl_info_str());
    return copy;
  }
  dnnl::memory::desc& desc_of(int value) { return desc[static_cast<std::size_t>(value)]; }
  // A consumer's source layout: the producer's, or (for the input) whatever the consumer prefers.
  dnnl::memory::desc src_or(int value, tag fallback) {
    return desc_of(value).is_zero() ? dnnl::memory::desc(shape(value), act, fallback) : desc_of(value);
  }
  static ArgRef v(int value) { return {value, {}}; }
  static ArgRef c(dnnl::memory m) { return {-1, std::move(m)}; }

  void add_step(dnnl::primitive p, std::vector<std::pair<int, ArgRef>> args, const std::string& kind, const char* impl) {
    steps.push_back({std::move(p), std::move(args), kind + " " + impl, {}, nullptr});
  }

  // int8: the value a conv reads for f32 `value`: its s8 copy, channel c multiplied by
  // channel_scales[c] and rounded.
  int quantized(int value, const dnnl::memory::desc& layout, const std::vector<float>& channel_scales) {
    dnnl::primitive_attr attr;
    attr.set_output_scales(1 << 1, channel_scales);
    return reordered_copy(value, layout, attr, "to-s8");
  }

  void lower(int index, const FusedOp& op) {
    switch (op.kind) {
      case OpKind::Input: break;  // the input reorder is added at the end, once its layout is known
      case OpKind::Conv: conv(index, op); break;
      case OpKind::Affine: affine(op); break;
      case OpKind::Bias: bias(op); break;
      case OpKind::Add: add(op); break;
      case OpKind::Subsample: subsample(op); break;
      case OpKind::Head: head(index, op); break;
    }
  }

  // Convs and the head take their scratch memory from the network (one buffer, the largest any of
  // them needs: steps run one at a time), not each its own: oneDNN's own scratchpads are per
  // primitive in Debian's build, ~3 MiB per Winograd conv, 0.26 GiB over IR-101.
  static dnnl::primitive_attr shared_scratchpad() {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
  }
  template <typename PrimitiveDesc>
  void use_shared_scratchpad(const PrimitiveDesc& pd) {
    steps.back().scratchpad = pd.scratchpad_desc();
    scratchpad_bytes = std::max(scratchpad_bytes, pd.scratchpad_desc().get_size());
  }

  // A conv's sum post-op (adding into `sum_input`, whose buffer its output then shares), if any.
  dnnl::primitive_attr conv_attr(const FusedOp& op) {
    dnnl::primitive_attr attr = shared_scratchpad();
    if (op.sum_input >= 0) {
      dnnl::post_ops ops;
      ops.append_sum(1.0f);
      attr.set_post_ops(ops);
      alias_of[static_cast<std::size_t>(op.output)] = op.sum_input;
    }
    return attr;
  }

  void conv(int index, const FusedOp& op) {
    if (int8) return int8_conv(index, op);
    int in = op.inputs[0];
    const dnnl::memory::desc src = conv_src(in);
    const dnnl::memory::desc wei({op.oc, value_dims[static_cast<std::size_t>(in)].c, op.kernel, op.kernel}, act, tag::any);
    // In a network with Winograd convs a direct conv writes their blocked layout: left to choose, it
    // may pick NHWC, which no Winograd conv reads (they would all fall back to direct).
    const tag dst_layout = winograd_network && !op.winograd ? tag::aBcd16b : tag::any;
    const dnnl::memory::desc dst =
        op.sum_input >= 0 ? desc_of(op.sum_input) : dnnl::memory::desc(shape(op.output), type_of(op.output), dst_layout);
    const dnnl::memory::dim pad = op.kernel / 2;
    const dims strides{op.stride, op.stride}, padding{pad, pad};
    const dnnl::primitive_attr attr = conv_attr(op);
    const dnnl::memory::desc bias_desc({op.oc}, dt::f32, tag::a);
    const bool has_bias = !op.bias.empty() || !op.in_scale.empty();  // a folded affine's shift is a bias
    const auto describe = [&](dnnl::algorithm algorithm) {
      const auto d = !has_bias
                         ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, algorithm, src, wei, dst,
                                                           strides, padding, padding)
                         : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, algorithm, src, wei,
                                                           bias_desc, dst, strides, padding, padding);
      return dnnl::convolution_forward::primitive_desc(d, attr, engine);
    };
    dnnl::convolution_forward::primitive_desc pd;
    if (op.winograd && act == dt::f32) {  // oneDNN 2.6's Winograd is f32 only
      try {
        pd = describe(dnnl::algorithm::convolution_winograd);
      } catch (const dnnl::error&) {  // none for the layouts its neighbours fixed: direct
      }
    }
    if (!pd) pd = describe(dnnl::algorithm::convolution_direct);
    if (desc_of(in).is_zero()) desc_of(in) = pd.src_desc();
    const int read = read_as(in, pd.src_desc());
    const WeightStore::ConvConstants constants = weights.conv(index, pd.weights_desc());
    add_conv_steps(op, pd, read, in, constants, constants.bias);
  }

  // The conv step (bias: the constant's or int8's scaled copy), its border correction and PReLU.
  void add_conv_steps(const FusedOp& op, const dnnl::convolution_forward::primitive_desc& pd, int read, int in,
                      const WeightStore::ConvConstants& constants, const dnnl::memory& bias) {
    desc_of(op.output) = pd.dst_desc();
    std::vector<std::pair<int, ArgRef>> args{
        {DNNL_ARG_SRC, v(read)}, {DNNL_ARG_WEIGHTS, c(constants.weights)}, {DNNL_ARG_DST, v(op.output)}};
    if (bias) args.push_back({DNNL_ARG_BIAS, c(bias)});
    add_step(dnnl::convolution_forward(pd), std::move(args), "conv", pd.impl_info_str());
    steps.back().conv_src = in;
    use_shared_scratchpad(pd);
    // The border correction before PReLU (it belongs to the conv's linear part).
    if (constants.border != nullptr)
      steps.push_back({{}, {{DNNL_ARG_DST, v(op.output)}}, "border-fix", {},
                       std::make_unique<BorderFix>(*constants.border, desc_of(op.output))});
    if (!op.alpha.empty()) prelu(op.output, op.alpha);
  }

  // s8 input x s8 weights, accumulated in s32, written as f32: oneDNN 2.6 computes
  // dst = output_scale[oc] * (acc + bias[oc]) (+ the sum post-op), so the output scale undoes both
  // quantization scales and the bias is given in the accumulator's units.
  void int8_conv(int index, const FusedOp& op) {
    const int in = op.inputs[0];
    const InputQuantization input = quantize_input(input_ranges[static_cast<std::size_t>(in)],
                                                   static_cast<std::size_t>(value_dims[static_cast<std::size_t>(in)].c));
    const float src_scale = input.tensor_scale;
    const auto copy = copy_of.find(in);
    const dnnl::memory::desc src = copy != copy_of.end() ? desc_of(copy->second) : dnnl::memory::desc(shape(in), dt::s8, tag::any);
    const dnnl::memory::desc wei({op.oc, value_dims[static_cast<std::size_t>(in)].c, op.kernel, op.kernel}, dt::s8, tag::any);
    const dnnl::memory::desc dst =
        op.sum_input >= 0 ? desc_of(op.sum_input) : dnnl::memory::desc(shape(op.output), dt::f32, tag::any);
    const std::vector<float> weight_scales = weights.conv_weight_scales(index, input.multipliers);
    std::vector<float> output_scales(weight_scales.size());
    for (std::size_t o = 0; o < output_scales.size(); ++o) output_scales[o] = 1.0f / (src_scale * weight_scales[o]);
    dnnl::primitive_attr attr = conv_attr(op);
    attr.set_output_scales(1 << 1, output_scales);
    const dnnl::memory::dim pad = op.kernel / 2;
    const dims strides{op.stride, op.stride}, padding{pad, pad};
    const dnnl::memory::desc bias_desc({op.oc}, dt::f32, tag::a);
    const dnnl::convolution_forward::primitive_desc pd(
        {dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wei, bias_desc, dst, strides,
         padding, padding},
        attr, engine);
    if (desc_of(in).is_zero()) desc_of(in) = with_type(pd.src_desc(), dt::f32);
    const int read = quantized(in, pd.src_desc(), input.channel_scales);
    const WeightStore::ConvConstants constants = weights.conv(index, pd.weights_desc());
    // Always a bias (zeros without one): the scaled copy is this network's.
    dnnl::memory bias(bias_desc, engine);
    float* scaled = static_cast<float*>(bias.get_data_handle());
    const float* given = constants.bias ? static_cast<const float*>(constants.bias.get_data_handle()) : nullptr;
    for (std::size_t o = 0; o < weight_scales.size(); ++o)
      scaled[o] = given != nullptr ? given[o] * src_scale * weight_scales[o] : 0.0f;
    add_conv_steps(op, pd, read, in, constants, bias);
  }

  // PReLU in place (oneDNN 2.6's AVX2 convs take no PReLU post-op; see docs/backends.md).
  void prelu(int value, std::span<const bf16_t> alpha) {
    // Weights in `any` layout: the jitted PReLU wants them blocked like the activation.
    const dnnl::memory::desc alpha_desc({1, static_cast<dnnl::memory::dim>(alpha.size()), 1, 1}, dt::f32, tag::any);
    const dnnl::prelu_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, desc_of(value), alpha_desc}, engine);
    add_step(dnnl::prelu_forward(pd),
             {{DNNL_ARG_SRC, v(value)},
              {DNNL_ARG_WEIGHTS, c(weights.channel_tensor(alpha, pd.weights_desc()))},
              {DNNL_ARG_DST, v(value)}},
             "prelu", pd.impl_info_str());
  }

  // x*scale + shift as an inference batch norm with mean 0, variance 1, epsilon 0: one pass.
  void affine(const FusedOp& op) {
    const int in = op.inputs[0];
    desc_of(in) = src_or(in, tag::nchw);
    const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                       dnnl::normalization_flags::use_shift;
    const dnnl::batch_normalization_forward::primitive_desc pd(
        {dnnl::prop_kind::forward_inference, desc_of(in), 0.0f, flags}, engine);
    desc_of(op.output) = pd.dst_desc();
    const std::size_t channels = op.scale.size();
    add_step(dnnl::batch_normalization_forward(pd),
             {{DNNL_ARG_SRC, v(in)},
              {DNNL_ARG_DST, v(op.output)},
              {DNNL_ARG_MEAN, c(weights.constant(channels, 0.0f))},
              {DNNL_ARG_VARIANCE, c(weights.constant(channels, 1.0f))},
              {DNNL_ARG_SCALE, c(weights.channel_vector(op.scale))},
              {DNNL_ARG_SHIFT, c(weights.channel_vector(op.shift))}},
             "affine", pd.impl_info_str());
  }

  void bias(const FusedOp& op) {
    const int in = op.inputs[0];
    desc_of(in) = src_or(in, tag::nchw);
    const dnnl::memory::desc per_channel({1, shape(in)[1], 1, 1}, dt::f32, tag::abcd);
    const dnnl::binary::primitive_desc pd({dnnl::algorithm::binary_add, desc_of(in), per_channel, desc_of(in)}, engine);
    desc_of(op.output) = pd.dst_desc();
    add_step(dnnl::binary(pd),
             {{DNNL_ARG_SRC_0, v(in)}, {DNNL_ARG_SRC_1, c(weights.channel_tensor(op.bias, per_channel))}, {DNNL_ARG_DST, v(op.output)}},
             "bias", pd.impl_info_str());
  }

  void add(const FusedOp& op) {
    const int a = op.inputs[0], b = op.inputs[1];
    desc_of(a) = src_or(a, tag::nchw);
    desc_of(b) = src_or(b, tag::nchw);
    const dnnl::binary::primitive_desc pd({dnnl::algorithm::binary_add, desc_of(a), desc_of(b), desc_of(a)}, engine);
    desc_of(op.output) = pd.dst_desc();
    add_step(dnnl::binary(pd), {{DNNL_ARG_SRC_0, v(a)}, {DNNL_ARG_SRC_1, v(b)}, {DNNL_ARG_DST, v(op.output)}}, "add",
             pd.impl_info_str());
  }

  // in[s*y, s*x]: a 1x1 max pooling with stride s (exact: one element per window).
  void subsample(const FusedOp& op) {
    const int in = op.inputs[0];
    desc_of(in) = src_or(in, tag::nchw);
    const dnnl::memory::desc dst(shape(op.output), desc_of(in).data_type(), tag::any);
    const dnnl::pooling_forward::primitive_desc pd(
        {dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, desc_of(in), dst, {op.stride, op.stride},
         {1, 1}, {0, 0}, {0, 0}},
        engine);
    desc_of(op.output) = pd.dst_desc();
    add_step(dnnl::pooling_forward(pd), {{DNNL_ARG_SRC, v(in)}, {DNNL_ARG_DST, v(op.output)}}, "subsample",
             pd.impl_info_str());
  }

  // The head as one inner product over the whole batch (M = faces), reading the blocked
  // activation directly (bf16 networks, and f32 ones asking for it, a bf16 copy); its weights are
  // laid out to match.
  void head(int index, const FusedOp& op) {
    int in = op.inputs[0];
    desc_of(in) = src_or(in, tag::nchw);
    const dims in_shape = shape(in);
    embed_dim = op.head->n;
    const dnnl::memory::dim n = static_cast<dnnl::memory::dim>(embed_dim);
    const dnnl::memory::desc bias_desc({n}, dt::f32, tag::a), dst({batch, n}, dt::f32, tag::nc);
    const auto describe = [&](dt type) {
      const dnnl::memory::desc wei({n, in_shape[1], in_shape[2], in_shape[3]}, type, tag::any);
      return dnnl::inner_product_forward::primitive_desc(
          {dnnl::prop_kind::forward_inference, with_type(desc_of(in), type), wei, bias_desc, dst}, shared_scratchpad(),
          engine);
    };
    dnnl::inner_product_forward::primitive_desc pd;
    if (op.bf16_input && act == dt::f32) {
      try {
        pd = describe(dt::bf16);
      } catch (const dnnl::error&) {  // no bf16 inner product on this ISA (AVX2): f32
      }
    }
    if (!pd) pd = describe(act);
    in = read_as(in, pd.src_desc());
    head_output = dnnl::memory(dst, engine);
    add_step(dnnl::inner_product_forward(pd),
             {{DNNL_ARG_SRC, v(in)},
              {DNNL_ARG_WEIGHTS, c(weights.weights(index, pd.weights_desc()))},
              {DNNL_ARG_BIAS, c(weights.head_bias(index))},
              {DNNL_ARG_DST, c(head_output)}},
             "head", pd.impl_info_str());
    use_shared_scratchpad(pd);
  }

  void add_input_reorder() {
    const int in = graph.input_value;
    desc_of(in) = src_or(in, tag::nchw);
    user_input = dnnl::memory({shape(in), dt::f32, tag::nchw}, engine);
    const dnnl::reorder::primitive_desc pd(engine, user_input.get_desc(), engine, desc_of(in));
    steps.insert(steps.begin(), Step{dnnl::reorder(pd), {{DNNL_ARG_FROM, c(user_input)}, {DNNL_ARG_TO, v(in)}},
                                     std::string("input ") + pd.impl_info_str(), {}, nullptr});
  }

  // Buffers by liveness: a value takes a free buffer (smallest that fits) when first written
  // and returns it after its last reader; a sum post-op's output shares its operand's buffer.
  std::size_t assign_buffers() {
    const std::size_t values = desc.size();
    std::vector<int> first(values, -1), last(values, -1);
    for (std::size_t k = 0; k < steps.size(); ++k)
      for (const auto& [id, ref] : steps[k].args)
        if (ref.value >= 0) {
          const std::size_t v = static_cast<std::size_t>(ref.value);
          if (first[v] < 0) first[v] = static_cast<int>(k);
          last[v] = static_cast<int>(k);
        }
    for (std::size_t v = 0; v < values; ++v)
      if (alias_of[v] >= 0 && first[v] >= 0) {
        const std::size_t operand = static_cast<std::size_t>(alias_of[v]);
        last[operand] = std::max(last[operand], first[v]);
      }
    std::vector<int> buffer_of(values, -1), refs;
    std::size_t total = 0;
    for (std::size_t k = 0; k < steps.size(); ++k) {
      for (const auto& [id, ref] : steps[k].args) {
        if (ref.value < 0 || buffer_of[static_cast<std::size_t>(ref.value)] >= 0) continue;
        const std::size_t v = static_cast<std::size_t>(ref.value);
        if (alias_of[v] >= 0) {
          buffer_of[v] = buffer_of[static_cast<std::size_t>(alias_of[v])];
        } else {
          const std::size_t need = desc[v].get_size();
          int best = -1;
          for (std::size_t b = 0; b < buffers.size(); ++b)
            if (refs[b] == 0 && buffers[b]->bytes >= need &&
                (best < 0 || buffers[b]->bytes < buffers[static_cast<std::size_t>(best)]->bytes))
              best = static_cast<int>(b);
          if (best < 0) {
            buffers.push_back(std::make_unique<AlignedBuffer>(need));
            refs.push_back(0);
            total += buffers.back()->bytes;
            best = static_cast<int>(buffers.size()) - 1;
          }
          buffer_of[v] = best;
        }
        ++refs[static_cast<std::size_t>(buffer_of[v])];
      }
      for (std::size_t v = 0; v < values; ++v)
        if (last[v] == static_cast<int>(k) && buffer_of[v] >= 0) --refs[static_cast<std::size_t>(buffer_of[v])];
    }
    if (scratchpad_bytes > 0) {
      buffers.push_back(std::make_unique<AlignedBuffer>(scratchpad_bytes));
      total += buffers.back()->bytes;
    }
    value_memory.resize(values);
    for (std::size_t v = 0; v < values; ++v)
      if (buffer_of[v] >= 0)
        value_memory[v] = dnnl::memory(desc[v], engine, buffers[static_cast<std::size_t>(buffer_of[v])]->data);
    for (Step& step : steps) {
      for (const auto& [id, ref] : step.args)
        step.bound[id] = ref.value >= 0 ? value_memory[static_cast<std::size_t>(ref.value)] : ref.fixed;
      if (!step.scratchpad.is_zero()) step.bound[DNNL_ARG_SCRATCHPAD] = dnnl::memory(step.scratchpad, engine, buffers.back()->data);
    }
    return total;
  }

  void load_inputs(std::span<const std::span<const bf16_t>> inputs) {
    const plan::Dims& d = graph.values[static_cast<std::size_t>(graph.input_value)];
    const std::size_t per_face = d.elements();
    float* out = static_cast<float*>(user_input.get_data_handle());
    std::memset(out, 0, per_face * static_cast<std::size_t>(batch) * sizeof(float));
    for (std::size_t n = 0; n < inputs.size(); ++n) {
      float* face = out + n * per_face;
      const std::span<const bf16_t> tiled = inputs[n];
      for (int ch = 0; ch < d.c; ++ch)
        for (int y = 0; y < d.h; ++y)
          for (int x = 0; x < d.w; ++x)
            face[(static_cast<std::size_t>(ch) * d.h + y) * d.w + x] = numerics::bf16_to_f32(
                tiled[numerics::tiled_index(d.c, d.w, static_cast<std::size_t>(ch), static_cast<std::size_t>(y),
                                            static_cast<std::size_t>(x))]);
    }
  }
};

OnednnNetwork::OnednnNetwork(const FusedGraph& graph, WeightStore& weights, dnnl::engine engine, dt compute_type,
                             int batch, std::span<const std::vector<float>> input_ranges)
    : impl_(std::make_unique<Impl>(graph, weights, std::move(engine), compute_type, batch, input_ranges)), batch_(batch) {
  for (std::size_t i = 0; i < graph.ops.size(); ++i) impl_->lower(static_cast<int>(i), graph.ops[i]);
  impl_->add_input_reorder();
  activation_bytes_ = impl_->assign_buffers();
}

OnednnNetwork::~OnednnNetwork() = default;

std::vector<std::vector<float>> OnednnNetwork::run(std::span<const std::span<const bf16_t>> inputs,
                                                   std::vector<std::vector<float>>* conv_input_ranges) {
  impl_->load_inputs(inputs);
  if (conv_input_ranges != nullptr) conv_input_ranges->assign(impl_->graph.values.size(), {});
  for (Step& step : impl_->steps) {
    if (conv_input_ranges != nullptr && step.conv_src >= 0) {
      impl_->stream.wait();
      std::vector<float>& ranges = (*conv_input_ranges)[static_cast<std::size_t>(step.conv_src)];
      widen_ranges(impl_->engine, impl_->stream, step.bound.at(DNNL_ARG_SRC), ranges);
    }
    step.run(impl_->stream);
  }
  impl_->stream.wait();
  const float* out = static_cast<const float*>(impl_->head_output.get_data_handle());
  std::vector<std::vector<float>> results;
  for (std::size_t n = 0; n < inputs.size(); ++n)
    results.emplace_back(out + n * impl_->embed_dim, out + (n + 1) * impl_->embed_dim);
  return results;
}

std::string OnednnNetwork::implementations() const {
  std::map<std::string, int> counts;
  for (const Step& step : impl_->steps) ++counts[step.what];
  std::string text;
  for (const auto& [what, count] : counts) text += (text.empty() ? "" : ", ") + what + " x" + std::to_string(count);
  return text;
}

}  // namespace taconite::cpu

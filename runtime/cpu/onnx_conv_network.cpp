#include "cpu/onnx_conv_network.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_map>

#include "common/failure.hpp"
#include "cpu/omp_threads.hpp"

namespace taconite::cpu {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;
using onnx::OnnxAttribute;
using onnx::OnnxNode;
using onnx::OnnxTensor;

namespace {

// Bounds on what an attribute may ask for (YuNet: kernels of 3, strides of 2, scales of 2).
constexpr std::int64_t kMaxKernel = 64, kMaxStride = 64, kMaxPad = 64, kMaxScale = 64;
constexpr std::int64_t kMaxChannels = 1 << 16;
constexpr std::size_t kMaxActivationBytes = std::size_t{1} << 32;

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

// What a graph name stands for: an activation (by value id), possibly seen through the outputs'
// Transpose (to NHWC) and Reshape, which only change how its elements are numbered.
struct Tensor {
  int value = -1;
  bool nhwc = false;      // after Transpose perm (0, 2, 3, 1)
  bool reshaped = false;  // after a Reshape (the row-major order of `shape` kept)
  std::vector<std::int64_t> shape;
  bool plain() const { return !nhwc && !reshaped; }
};

// A primitive argument: an activation (by value id) or a constant memory.
struct ArgRef {
  int value = -1;
  dnnl::memory fixed;
};

struct Step {
  dnnl::primitive primitive;
  std::vector<std::pair<int, ArgRef>> args;
  std::string what;
  dnnl::memory::desc scratchpad;
  std::unordered_map<int, dnnl::memory> bound;
};

std::int64_t int_attribute(const OnnxNode& node, const char* name, std::int64_t fallback) {
  const OnnxAttribute* a = node.attribute(name);
  return a ? a->i : fallback;
}

std::string string_attribute(const OnnxNode& node, const char* name, const std::string& fallback) {
  const OnnxAttribute* a = node.attribute(name);
  return a ? a->s : fallback;
}

}  // namespace

struct OnnxConvNetwork::Impl {
  const onnx::OnnxGraph& graph;  // read while the constructor lowers it, not after
  std::string origin;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};

  std::vector<dims> shapes;                 // per value, NCHW
  std::vector<dnnl::memory::desc> descs;    // per value; zero until its first user chooses it
  std::map<std::string, Tensor> tensors;    // graph name -> what it holds
  std::map<std::string, int> readers;       // graph name -> how many nodes (and graph outputs) read it
  std::set<std::string> graph_outputs;
  std::set<const OnnxNode*> fused;          // Relu / Sigmoid nodes a conv took as its post-op
  std::vector<Step> steps;
  std::vector<std::unique_ptr<AlignedBuffer>> buffers;
  std::unique_ptr<AlignedBuffer> scratchpad;  // shared by the primitives (they run one at a time)
  std::size_t activation_bytes = 0;
  int input_value = -1;
  dnnl::memory user_input;
  std::map<std::string, dnnl::memory> outputs;

  Impl(const onnx::OnnxGraph& g, const std::string& o) : graph(g), origin(o) {}

  [[noreturn]] void refuse(const OnnxNode& node, const std::string& problem) const {
    fail(ErrorKind::Input, origin + ": node '" + node.name + "' (" + node.op_type + "): " + problem);
  }

  int new_value(dims shape) {
    std::size_t bytes = sizeof(float);
    for (auto d : shape) {
      if (d < 1 || static_cast<std::size_t>(d) > kMaxActivationBytes / bytes)
        fail(ErrorKind::Input, origin + ": an activation of more than 4 GiB");
      bytes *= static_cast<std::size_t>(d);
    }
    shapes.push_back(std::move(shape));
    descs.emplace_back();
    return static_cast<int>(shapes.size()) - 1;
  }
  dnnl::memory::desc& desc_of(int value) { return descs[static_cast<std::size_t>(value)]; }
  const dims& shape_of(int value) const { return shapes[static_cast<std::size_t>(value)]; }
  // A reader's source layout: the producer's, or (the graph input) what the reader prefers.
  dnnl::memory::desc src_or(int value, tag fallback) {
    return desc_of(value).is_zero() ? dnnl::memory::desc(shape_of(value), dt::f32, fallback) : desc_of(value);
  }

  const Tensor& input_tensor(const OnnxNode& node, std::size_t index) const {
    if (index >= node.inputs.size() || node.inputs[index].empty()) refuse(node, "input " + std::to_string(index) + " missing");
    const auto found = tensors.find(node.inputs[index]);
    if (found == tensors.end()) {
      if (graph.constants.count(node.inputs[index]))
        refuse(node, "input '" + node.inputs[index] + "' is a constant where an activation is expected");
      refuse(node, "input '" + node.inputs[index] + "' is not computed before it");
    }
    return found->second;
  }
  int plain_input(const OnnxNode& node, std::size_t index) const {
    const Tensor& t = input_tensor(node, index);
    if (!t.plain()) refuse(node, "input '" + node.inputs[index] + "' is transposed or reshaped (only outputs may be)");
    return t.value;
  }
  const OnnxTensor* constant(const OnnxNode& node, std::size_t index, bool is_float) const {
    if (index >= node.inputs.size() || node.inputs[index].empty()) return nullptr;
    const auto found = graph.constants.find(node.inputs[index]);
    if (found == graph.constants.end() || found->second.is_float != is_float)
      refuse(node, "input '" + node.inputs[index] + "' must be a constant " + (is_float ? "float" : "int64") + " tensor");
    return &found->second;
  }
  void produce(const OnnxNode& node, Tensor tensor) {
    if (node.outputs.size() != 1 || node.outputs[0].empty()) refuse(node, "expected exactly one output");
    if (tensors.count(node.outputs[0]) || graph.constants.count(node.outputs[0]))
      refuse(node, "output '" + node.outputs[0] + "' is already defined");
    tensors[node.outputs[0]] = std::move(tensor);
  }
  Tensor plain_tensor(int value) const {
    const dims& s = shape_of(value);
    return {value, false, false, std::vector<std::int64_t>(s.begin(), s.end())};
  }
  // Two spatial values of an attribute (kernel, strides, dilations), each within lo..hi.
  std::array<std::int64_t, 2> pair(const OnnxNode& node, const char* name, std::int64_t fallback, std::int64_t lo,
                                   std::int64_t hi) const {
    const OnnxAttribute* a = node.attribute(name);
    if (a == nullptr) return {fallback, fallback};
    if (a->ints.size() != 2) refuse(node, std::string(name) + " must have 2 values (2-d only)");
    for (auto v : a->ints)
      if (v < lo || v > hi) refuse(node, std::string(name) + " out of " + std::to_string(lo) + ".." + std::to_string(hi));
    return {a->ints[0], a->ints[1]};
  }
  std::array<std::int64_t, 4> pads(const OnnxNode& node) const {
    if (string_attribute(node, "auto_pad", "NOTSET") != "NOTSET") refuse(node, "auto_pad is not supported");
    const OnnxAttribute* a = node.attribute("pads");
    if (a == nullptr) return {0, 0, 0, 0};
    if (a->ints.size() != 4) refuse(node, "pads must have 4 values");
    for (auto v : a->ints)
      if (v < 0 || v > kMaxPad) refuse(node, "pads out of 0.." + std::to_string(kMaxPad));
    return {a->ints[0], a->ints[1], a->ints[2], a->ints[3]};
  }
  // The single elementwise node (Relu, Sigmoid) reading `name`, through the outputs' Transpose and
  // Reshape (which do not change which value an element has), when nothing else reads the way.
  const OnnxNode* sole_activation_after(std::string name) const {
    for (;;) {
      if (graph_outputs.count(name) || readers.count(name) == 0 || readers.at(name) != 1) return nullptr;
      const OnnxNode* reader = nullptr;
      for (const OnnxNode& n : graph.nodes)
        if (std::find(n.inputs.begin(), n.inputs.end(), name) != n.inputs.end()) reader = &n;
      if (reader == nullptr || reader->outputs.size() != 1) return nullptr;
      if (reader->op_type == "Relu" || reader->op_type == "Sigmoid") return reader;
      if (reader->op_type != "Transpose" && reader->op_type != "Reshape") return nullptr;
      if (reader->inputs.empty() || reader->inputs[0] != name) return nullptr;
      name = reader->outputs[0];
    }
  }

  // Every primitive takes its scratchpad from the network (one buffer, the largest any needs): in
  // oneDNN 2.6's default mode each execution allocates and frees it.
  static dnnl::primitive_attr attr() {
    dnnl::primitive_attr a;
    a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return a;
  }
  template <typename Primitive>
  void add_step(const typename Primitive::primitive_desc& pd, std::vector<std::pair<int, ArgRef>> args,
                const std::string& kind) {
    steps.push_back({Primitive(pd), std::move(args), kind + " " + pd.impl_info_str(), pd.scratchpad_desc(), {}});
  }
  // A constant in the layout a primitive chose, reordered once from the file's plain layout.
  dnnl::memory constant_memory(const std::vector<float>& values, const dnnl::memory::desc& plain,
                               const dnnl::memory::desc& wanted) {
    dnnl::memory from(plain, engine, const_cast<float*>(values.data()));
    dnnl::memory to(wanted, engine);
    dnnl::reorder(from, to).execute(stream, from, to);
    stream.wait();
    return to;
  }

  void conv(const OnnxNode& node) {
    const int in = plain_input(node, 0);
    const OnnxTensor* w = constant(node, 1, true);
    if (w == nullptr) refuse(node, "no weights");
    const OnnxTensor* b = constant(node, 2, true);
    const dims& x = shape_of(in);
    const std::int64_t group = int_attribute(node, "group", 1);
    if (w->dims.size() != 4) refuse(node, "weights must be 4-d (2-d convolution only)");
    const std::int64_t oc = w->dims[0];
    if (group < 1 || group > kMaxChannels || oc < 1 || oc > kMaxChannels || oc % group != 0 || w->dims[1] * group != x[1])
      refuse(node, "weights of " + onnx::dims_text(w->dims) + " with group " + std::to_string(group) + " do not fit " +
                       std::to_string(x[1]) + " input channels");
    if (b != nullptr && (b->dims.size() != 1 || b->dims[0] != oc)) refuse(node, "bias must have " + std::to_string(oc) + " values");
    const auto kernel = std::array<std::int64_t, 2>{w->dims[2], w->dims[3]};
    if (kernel[0] < 1 || kernel[0] > kMaxKernel || kernel[1] < 1 || kernel[1] > kMaxKernel) refuse(node, "kernel out of range");
    if (const OnnxAttribute* k = node.attribute("kernel_shape"); k && (k->ints.size() != 2 || k->ints[0] != kernel[0] || k->ints[1] != kernel[1]))
      refuse(node, "kernel_shape does not match the weights");
    const auto stride = pair(node, "strides", 1, 1, kMaxStride);
    const auto dilation = pair(node, "dilations", 1, 1, kMaxKernel);
    const auto pad = pads(node);
    dims out_shape{x[0], oc, 0, 0};
    for (int i = 0; i < 2; ++i) {
      const std::int64_t span = (kernel[i] - 1) * dilation[i] + 1;
      const std::int64_t extent = x[2 + i] + pad[i] + pad[2 + i] - span;
      if (extent < 0) refuse(node, "the kernel is larger than its padded input");
      out_shape[2 + i] = extent / stride[i] + 1;
    }
    const dnnl::memory::desc src = src_or(in, tag::any);
    const bool grouped = group > 1;
    const dims wei_dims = grouped ? dims{group, oc / group, w->dims[1], kernel[0], kernel[1]} : dims{oc, w->dims[1], kernel[0], kernel[1]};
    const dnnl::memory::desc wei(wei_dims, dt::f32, tag::any);
    const int out = new_value(out_shape);
    const dnnl::memory::desc bias_desc({oc}, dt::f32, tag::a);
    dnnl::primitive_attr conv_attr = attr();
    std::string kind = "conv";
    if (const OnnxNode* act = sole_activation_after(node.outputs.at(0))) {
      dnnl::post_ops ops;
      const bool relu = act->op_type == "Relu";
      ops.append_eltwise(1.0f, relu ? dnnl::algorithm::eltwise_relu : dnnl::algorithm::eltwise_logistic, 0.0f, 0.0f);
      conv_attr.set_post_ops(ops);
      fused.insert(act);
      kind += relu ? "+relu" : "+sigmoid";
    }
    const dims strides{stride[0], stride[1]}, dilates{dilation[0] - 1, dilation[1] - 1};
    const dims pad_l{pad[0], pad[1]}, pad_r{pad[2], pad[3]};
    const auto primitive_desc = [&](const dnnl::memory::desc& dst) {
      const auto d = b ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                         src, wei, bias_desc, dst, strides, dilates, pad_l, pad_r)
                       : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                         src, wei, dst, strides, dilates, pad_l, pad_r);
      return dnnl::convolution_forward::primitive_desc(d, conv_attr, engine);
    };
    // The output in the layout oneDNN prefers (forcing 16-channel blocks left the heads' 1 to 10
    // channel convs to its reference kernels).
    const dnnl::convolution_forward::primitive_desc pd = primitive_desc({out_shape, dt::f32, tag::any});
    if (desc_of(in).is_zero()) desc_of(in) = pd.src_desc();
    desc_of(out) = pd.dst_desc();
    const dnnl::memory::desc plain_weights(wei_dims, dt::f32, grouped ? tag::goihw : tag::oihw);
    std::vector<std::pair<int, ArgRef>> args{{DNNL_ARG_SRC, {in, {}}},
                                             {DNNL_ARG_WEIGHTS, {-1, constant_memory(w->floats, plain_weights, pd.weights_desc())}},
                                             {DNNL_ARG_DST, {out, {}}}};
    if (b) args.push_back({DNNL_ARG_BIAS, {-1, constant_memory(b->floats, bias_desc, pd.bias_desc())}});
    add_step<dnnl::convolution_forward>(pd, std::move(args), kind);
    produce(node, plain_tensor(out));
  }

  void eltwise(const OnnxNode& node) {
    const Tensor& source = input_tensor(node, 0);
    if (fused.count(&node)) {  // its conv applied it already: the name stands for the same value
      produce(node, source);
      return;
    }
    const int in = plain_input(node, 0);
    desc_of(in) = src_or(in, tag::nchw);
    const bool relu = node.op_type == "Relu";
    const dnnl::eltwise_forward::primitive_desc pd(
        {dnnl::prop_kind::forward_inference, relu ? dnnl::algorithm::eltwise_relu : dnnl::algorithm::eltwise_logistic,
         desc_of(in), 0.0f},
        attr(), engine);
    const int out = new_value(shape_of(in));
    desc_of(out) = pd.dst_desc();
    add_step<dnnl::eltwise_forward>(pd, {{DNNL_ARG_SRC, {in, {}}}, {DNNL_ARG_DST, {out, {}}}}, relu ? "relu" : "sigmoid");
    produce(node, plain_tensor(out));
  }

  void max_pool(const OnnxNode& node) {
    const int in = plain_input(node, 0);
    if (node.outputs.size() != 1) refuse(node, "the indices output is not supported");
    if (int_attribute(node, "ceil_mode", 0) != 0) refuse(node, "ceil_mode is not supported");
    if (int_attribute(node, "storage_order", 0) != 0) refuse(node, "storage_order is not supported");
    pair(node, "dilations", 1, 1, 1);  // refuses any other
    if (node.attribute("kernel_shape") == nullptr) refuse(node, "no kernel_shape");
    const auto kernel = pair(node, "kernel_shape", 1, 1, kMaxKernel);
    const auto stride = pair(node, "strides", 1, 1, kMaxStride);
    const auto pad = pads(node);
    const dims& x = shape_of(in);
    dims out_shape{x[0], x[1], 0, 0};
    for (int i = 0; i < 2; ++i) {
      const std::int64_t extent = x[2 + i] + pad[i] + pad[2 + i] - kernel[i];
      if (extent < 0 || pad[i] >= kernel[i] || pad[2 + i] >= kernel[i]) refuse(node, "the kernel does not fit its padded input");
      out_shape[2 + i] = extent / stride[i] + 1;
    }
    desc_of(in) = src_or(in, tag::nchw);
    const int out = new_value(out_shape);
    const dnnl::pooling_forward::primitive_desc pd(
        {dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, desc_of(in),
         dnnl::memory::desc(out_shape, dt::f32, tag::any), {stride[0], stride[1]}, {kernel[0], kernel[1]},
         {pad[0], pad[1]}, {pad[2], pad[3]}},
        attr(), engine);
    desc_of(out) = pd.dst_desc();
    add_step<dnnl::pooling_forward>(pd, {{DNNL_ARG_SRC, {in, {}}}, {DNNL_ARG_DST, {out, {}}}}, "maxpool");
    produce(node, plain_tensor(out));
  }

  // Nearest-neighbour upsampling by whole factors: every mode accepted here takes input pixel
  // floor(i / factor), which is what oneDNN's nearest resampling takes for whole factors.
  void resize(const OnnxNode& node) {
    const int in = plain_input(node, 0);
    const dims& x = shape_of(in);
    if (string_attribute(node, "mode", "nearest") != "nearest") refuse(node, "only mode 'nearest' is supported");
    const std::string transform = string_attribute(node, "coordinate_transformation_mode", "half_pixel");
    const std::string rounding = string_attribute(node, "nearest_mode", "round_prefer_floor");
    const bool exact = (transform == "asymmetric" && rounding == "floor") ||
                       (transform == "half_pixel" && (rounding == "round_prefer_floor" || rounding == "round_prefer_ceil"));
    if (!exact) refuse(node, "coordinate_transformation_mode '" + transform + "' with nearest_mode '" + rounding + "' is not supported");
    if (int_attribute(node, "antialias", 0) != 0 || node.attribute("axes")) refuse(node, "antialias and axes are not supported");
    std::array<std::int64_t, 4> factor{};
    const OnnxTensor* scales = node.inputs.size() > 2 && !node.inputs[2].empty() ? constant(node, 2, true) : nullptr;
    const OnnxTensor* sizes = node.inputs.size() > 3 && !node.inputs[3].empty() ? constant(node, 3, false) : nullptr;
    if ((scales != nullptr && !scales->floats.empty()) == (sizes != nullptr))
      refuse(node, "exactly one of scales and sizes must be given");
    for (std::size_t i = 0; i < 4; ++i) {
      if (sizes != nullptr) {
        if (sizes->ints.size() != 4) refuse(node, "sizes must have 4 values");
        factor[i] = sizes->ints[i] % x[i] == 0 ? sizes->ints[i] / x[i] : 0;
      } else {
        if (scales->floats.size() != 4) refuse(node, "scales must have 4 values");
        const float s = scales->floats[i];
        factor[i] = s >= 1 && s <= kMaxScale && s == static_cast<float>(static_cast<std::int64_t>(s)) ? static_cast<std::int64_t>(s) : 0;
      }
      if (factor[i] < 1 || factor[i] > kMaxScale) refuse(node, "only whole upscaling factors up to " + std::to_string(kMaxScale) + " are supported");
    }
    if (factor[0] != 1 || factor[1] != 1) refuse(node, "only height and width may be scaled");
    const dims out_shape{x[0], x[1], x[2] * factor[2], x[3] * factor[3]};
    desc_of(in) = src_or(in, tag::nchw);
    const int out = new_value(out_shape);
    const dnnl::resampling_forward::primitive_desc pd(
        {dnnl::prop_kind::forward_inference, dnnl::algorithm::resampling_nearest, desc_of(in),
         dnnl::memory::desc(out_shape, dt::f32, tag::any)},
        attr(), engine);
    desc_of(out) = pd.dst_desc();
    add_step<dnnl::resampling_forward>(pd, {{DNNL_ARG_SRC, {in, {}}}, {DNNL_ARG_DST, {out, {}}}}, "resize");
    produce(node, plain_tensor(out));
  }

  void add(const OnnxNode& node) {
    if (node.inputs.size() != 2) refuse(node, "expected two inputs");
    const int a = plain_input(node, 0), b = plain_input(node, 1);
    if (shape_of(a) != shape_of(b)) refuse(node, "inputs of different shapes (broadcasting is not supported)");
    desc_of(a) = src_or(a, tag::nchw);
    desc_of(b) = src_or(b, tag::nchw);
    const int out = new_value(shape_of(a));
    const dnnl::binary::primitive_desc pd({dnnl::algorithm::binary_add, desc_of(a), desc_of(b), desc_of(a)}, attr(), engine);
    desc_of(out) = pd.dst_desc();
    add_step<dnnl::binary>(pd, {{DNNL_ARG_SRC_0, {a, {}}}, {DNNL_ARG_SRC_1, {b, {}}}, {DNNL_ARG_DST, {out, {}}}}, "add");
    produce(node, plain_tensor(out));
  }

  void transpose(const OnnxNode& node) {
    const Tensor& in = input_tensor(node, 0);
    const OnnxAttribute* perm = node.attribute("perm");
    if (!in.plain() || perm == nullptr || perm->ints != std::vector<std::int64_t>{0, 2, 3, 1})
      refuse(node, "only perm (0, 2, 3, 1) of an untransposed 4-d activation is supported");
    Tensor out = in;
    out.nhwc = true;
    out.shape = {in.shape[0], in.shape[2], in.shape[3], in.shape[1]};
    produce(node, std::move(out));
  }

  void reshape(const OnnxNode& node) {
    const Tensor& in = input_tensor(node, 0);
    const OnnxTensor* target = constant(node, 1, false);
    if (target == nullptr || target->dims.size() != 1 || target->ints.empty() || target->ints.size() > 8)
      refuse(node, "the shape must be a constant of 1 to 8 values");
    if (int_attribute(node, "allowzero", 0) != 0) refuse(node, "allowzero is not supported");
    std::int64_t elements = 1, known = 1;
    for (auto d : in.shape) elements *= d;
    std::vector<std::int64_t> shape = target->ints;
    int inferred = -1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 0) {
        if (i >= in.shape.size()) refuse(node, "a 0 in the shape past the input's dimensions");
        shape[i] = in.shape[i];
      }
      if (shape[i] == -1) {
        if (inferred >= 0) refuse(node, "more than one -1 in the shape");
        inferred = static_cast<int>(i);
      } else if (shape[i] < 1 || shape[i] > elements) {
        refuse(node, "a dimension out of range in the shape");
      } else {
        known *= shape[i];
      }
    }
    if (inferred >= 0 && known > 0 && elements % known == 0) shape[static_cast<std::size_t>(inferred)] = elements / known;
    std::int64_t product = 1;
    for (auto d : shape) product *= d;
    if (product != elements) refuse(node, "the shape " + onnx::dims_text(target->ints) + " does not hold " + std::to_string(elements) + " elements");
    Tensor out = in;
    out.reshaped = true;
    out.shape = std::move(shape);
    produce(node, std::move(out));
  }

  void lower(const OnnxNode& node) {
    if (!node.domain.empty() && node.domain != "ai.onnx") refuse(node, "domain '" + node.domain + "' is not supported");
    const std::string& op = node.op_type;
    if (op == "Conv") conv(node);
    else if (op == "Relu" || op == "Sigmoid") eltwise(node);
    else if (op == "MaxPool") max_pool(node);
    else if (op == "Resize") resize(node);
    else if (op == "Add") add(node);
    else if (op == "Transpose") transpose(node);
    else if (op == "Reshape") reshape(node);
    else refuse(node, "this operator is not supported");
  }

  void set_input(int height, int width) {
    if (graph.inputs.size() != 1) fail(ErrorKind::Input, origin + ": expected one graph input, not " + std::to_string(graph.inputs.size()));
    const onnx::DeclaredTensor& declared = graph.inputs[0];
    const auto& d = declared.dims;
    const bool fits = d.size() == 4 && (d[0] == 1 || d[0] == onnx::kUnknownDim) && d[1] >= 1 && d[1] <= kMaxChannels &&
                      (d[2] == height || d[2] == onnx::kUnknownDim) && (d[3] == width || d[3] == onnx::kUnknownDim);
    if (!fits)
      fail(ErrorKind::Input, origin + ": input '" + declared.name + "' of " + onnx::dims_text(d) + " cannot take 1x?x" +
                                 std::to_string(height) + "x" + std::to_string(width));
    input_value = new_value({1, d[1], height, width});
    tensors[declared.name] = plain_tensor(input_value);
  }

  void count_readers() {
    for (const OnnxNode& node : graph.nodes)
      for (const std::string& name : node.inputs) ++readers[name];
    for (const onnx::DeclaredTensor& out : graph.outputs) {
      ++readers[out.name];
      graph_outputs.insert(out.name);
    }
  }

  // One reorder per graph output into its own memory, in the order its declared shape numbers it.
  void add_output_reorders() {
    for (const onnx::DeclaredTensor& declared : graph.outputs) {
      const auto found = tensors.find(declared.name);
      if (found == tensors.end()) fail(ErrorKind::Input, origin + ": output '" + declared.name + "' is not computed");
      const Tensor& t = found->second;
      bool matches = t.shape.size() == declared.dims.size();
      for (std::size_t i = 0; matches && i < t.shape.size(); ++i)
        matches = declared.dims[i] == onnx::kUnknownDim || declared.dims[i] == t.shape[i];
      if (!matches)
        fail(ErrorKind::Input, origin + ": output '" + declared.name + "' is " + onnx::dims_text(t.shape) +
                                   ", not the declared " + onnx::dims_text(declared.dims));
      desc_of(t.value) = src_or(t.value, tag::nchw);
      dnnl::memory memory({shape_of(t.value), dt::f32, t.nhwc ? tag::nhwc : tag::nchw}, engine);
      const dnnl::reorder::primitive_desc pd(engine, desc_of(t.value), engine, memory.get_desc(), attr());
      add_step<dnnl::reorder>(pd, {{DNNL_ARG_FROM, {t.value, {}}}, {DNNL_ARG_TO, {-1, memory}}}, "output");
      outputs[declared.name] = memory;
    }
  }

  void add_input_reorder() {
    user_input = dnnl::memory({shape_of(input_value), dt::f32, tag::nchw}, engine);
    desc_of(input_value) = src_or(input_value, tag::nchw);
    if (desc_of(input_value) == user_input.get_desc()) return;  // the first conv reads it as it is
    const dnnl::reorder::primitive_desc pd(engine, user_input.get_desc(), engine, desc_of(input_value), attr());
    add_step<dnnl::reorder>(pd, {{DNNL_ARG_FROM, {-1, user_input}}, {DNNL_ARG_TO, {input_value, {}}}}, "input");
    std::rotate(steps.begin(), steps.end() - 1, steps.end());  // it runs first
  }

  // Buffers by liveness: a value takes a free buffer (the smallest that fits) at its first use and
  // gives it back after its last.
  void assign_buffers() {
    const std::size_t values = shapes.size();
    std::vector<int> last(values, -1);
    for (std::size_t k = 0; k < steps.size(); ++k)
      for (const auto& [id, ref] : steps[k].args)
        if (ref.value >= 0) last[static_cast<std::size_t>(ref.value)] = static_cast<int>(k);
    std::vector<dnnl::memory> memory(values);
    if (desc_of(input_value) == user_input.get_desc()) memory[static_cast<std::size_t>(input_value)] = user_input;
    std::vector<int> buffer_of(values, -1);
    std::vector<bool> free;
    for (std::size_t k = 0; k < steps.size(); ++k) {
      for (const auto& [id, ref] : steps[k].args) {
        const std::size_t v = static_cast<std::size_t>(ref.value);
        if (ref.value < 0 || memory[v]) continue;
        const std::size_t need = descs[v].get_size();
        int best = -1;
        for (std::size_t b = 0; b < buffers.size(); ++b)
          if (free[b] && buffers[b]->bytes >= need && (best < 0 || buffers[b]->bytes < buffers[static_cast<std::size_t>(best)]->bytes))
            best = static_cast<int>(b);
        if (best < 0) {
          buffers.push_back(std::make_unique<AlignedBuffer>(need));
          free.push_back(true);
          activation_bytes += buffers.back()->bytes;
          best = static_cast<int>(buffers.size()) - 1;
        }
        free[static_cast<std::size_t>(best)] = false;
        buffer_of[v] = best;
        memory[v] = dnnl::memory(descs[v], engine, buffers[static_cast<std::size_t>(best)]->data);
      }
      for (std::size_t v = 0; v < values; ++v)
        if (last[v] == static_cast<int>(k) && buffer_of[v] >= 0) free[static_cast<std::size_t>(buffer_of[v])] = true;
    }
    std::size_t scratchpad_bytes = 0;
    for (const Step& step : steps) scratchpad_bytes = std::max(scratchpad_bytes, step.scratchpad.get_size());
    scratchpad = std::make_unique<AlignedBuffer>(std::max<std::size_t>(scratchpad_bytes, 1));
    for (Step& step : steps) {
      for (const auto& [id, ref] : step.args) step.bound[id] = ref.value >= 0 ? memory[static_cast<std::size_t>(ref.value)] : ref.fixed;
      if (step.scratchpad.get_size() > 0) step.bound[DNNL_ARG_SCRATCHPAD] = dnnl::memory(step.scratchpad, engine, scratchpad->data);
    }
  }
};

OnnxConvNetwork::OnnxConvNetwork(const onnx::OnnxGraph& graph, int height, int width, int threads,
                                 const std::string& origin)
    : impl_(std::make_unique<Impl>(graph, origin)), threads_(std::clamp(threads, 1, 64)) {
  Impl& n = *impl_;
  // oneDNN sizes a primitive's work split (and scratchpad) for the thread count it is created with.
  ScopedOmpThreads scoped(threads_);
  const OnnxNode* current = nullptr;
  try {
    n.count_readers();
    n.set_input(height, width);
    for (const OnnxNode& node : graph.nodes) n.lower(*(current = &node));
    current = nullptr;
    n.add_output_reorders();
    n.add_input_reorder();
    n.assign_buffers();
  } catch (const dnnl::error& e) {
    fail(ErrorKind::Device, origin + (current ? ": node '" + current->name + "' (" + current->op_type + ")" : std::string()) +
                                ": oneDNN refused it (" + e.what() + ")");
  }
}

OnnxConvNetwork::~OnnxConvNetwork() = default;

std::span<float> OnnxConvNetwork::input() {
  return {static_cast<float*>(impl_->user_input.get_data_handle()), impl_->user_input.get_desc().get_size() / sizeof(float)};
}

void OnnxConvNetwork::run() {
  ScopedOmpThreads scoped(threads_);
  for (Step& step : impl_->steps) step.primitive.execute(impl_->stream, step.bound);
  impl_->stream.wait();
}

std::span<const float> OnnxConvNetwork::output(const std::string& name) const {
  const auto found = impl_->outputs.find(name);
  if (found == impl_->outputs.end()) return {};
  return {static_cast<const float*>(found->second.get_data_handle()), found->second.get_desc().get_size() / sizeof(float)};
}

std::string OnnxConvNetwork::implementations() const {
  std::map<std::string, int> counts;
  for (const Step& step : impl_->steps) ++counts[step.what];
  std::string text;
  for (const auto& [what, count] : counts) text += (text.empty() ? "" : ", ") + what + " x" + std::to_string(count);
  return text;
}

std::size_t OnnxConvNetwork::activation_bytes() const { return impl_->activation_bytes; }

}  // namespace taconite::cpu

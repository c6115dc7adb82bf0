#include "onnx/onnx_graph.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "onnx/protobuf_reader.hpp"

namespace taconite::onnx {

namespace {

// Field numbers of onnx.proto3.
constexpr std::uint64_t kModelGraph = 7;
constexpr std::uint64_t kGraphNode = 1, kGraphInitializer = 5;
constexpr std::uint64_t kNodeInput = 1, kNodeOutput = 2, kNodeName = 3, kNodeOpType = 4, kNodeAttribute = 5,
                        kNodeDomain = 7;
constexpr std::uint64_t kAttrName = 1, kAttrF = 2, kAttrI = 3, kAttrS = 4, kAttrT = 5, kAttrFloats = 7, kAttrInts = 8;
constexpr std::uint64_t kTensorDims = 1, kTensorDataType = 2, kTensorFloatData = 4, kTensorInt64Data = 7,
                        kTensorName = 8, kTensorRawData = 9, kTensorDataLocation = 14;
constexpr std::uint64_t kFloat = 1, kInt64 = 7;
constexpr std::size_t kMaxRank = 8;
constexpr std::size_t kMaxText = 4096;
constexpr std::size_t kMaxNodeIo = 64;

std::string text_of(std::span<const std::uint8_t> bytes, const Reader& reader) {
  if (bytes.size() > kMaxText) reader.malformed("a name or string of more than " + std::to_string(kMaxText) + " bytes");
  return std::string(bytes.begin(), bytes.end());
}

void check_count(std::size_t count, std::size_t bound, const Reader& reader, const std::string& what) {
  if (count > bound) reader.malformed("more than " + std::to_string(bound) + " " + what);
}

// A repeated int64 field, packed (one Length field) or not (one Varint per value).
void append_ints(const Field& f, std::vector<std::int64_t>& out, const Reader& reader, const std::string& origin) {
  if (f.type == Varint) {
    out.push_back(static_cast<std::int64_t>(f.varint));
  } else if (f.type == Length) {
    Reader packed(f.bytes, origin);
    while (!packed.done()) {
      check_count(out.size(), kMaxTensorElements, reader, "values in one field");
      out.push_back(static_cast<std::int64_t>(packed.varint()));
    }
  }
  check_count(out.size(), kMaxTensorElements, reader, "values in one field");
}

// A repeated float field, packed (little-endian float32s) or not (one Fixed32 per value).
void append_floats(const Field& f, std::vector<float>& out, const Reader& reader) {
  if (f.type == Fixed32) {
    out.push_back(std::bit_cast<float>(f.fixed32));
  } else if (f.type == Length) {
    if (f.bytes.size() % 4 != 0) reader.malformed("packed floats whose size is not a multiple of 4");
    check_count(out.size() + f.bytes.size() / 4, kMaxTensorElements, reader, "values in one field");
    const std::size_t at = out.size();
    out.resize(at + f.bytes.size() / 4);
    std::memcpy(out.data() + at, f.bytes.data(), f.bytes.size());
  }
  check_count(out.size(), kMaxTensorElements, reader, "values in one field");
}

OnnxTensor tensor_of(std::span<const std::uint8_t> bytes, const std::string& origin, std::string& name) {
  static_assert(std::endian::native == std::endian::little, "ONNX raw data is little-endian");
  OnnxTensor tensor;
  Reader reader(bytes, origin);
  std::uint64_t type = 0;
  std::span<const std::uint8_t> raw;
  bool has_raw = false, external = false;
  for (Field f; reader.next(f);) {
    if (f.number == kTensorDims) append_ints(f, tensor.dims, reader, origin);
    if (f.number == kTensorDataType && f.type == Varint) type = f.varint;
    if (f.number == kTensorFloatData) append_floats(f, tensor.floats, reader);
    if (f.number == kTensorInt64Data) append_ints(f, tensor.ints, reader, origin);
    if (f.number == kTensorName && f.type == Length) name = text_of(f.bytes, reader);
    if (f.number == kTensorRawData && f.type == Length) raw = f.bytes, has_raw = true;
    if (f.number == kTensorDataLocation && f.type == Varint) external = f.varint == 1;
  }
  const std::string which = "tensor '" + name + "'";
  if (external) reader.malformed(which + " keeps its data in an external file");
  if (tensor.dims.size() > kMaxRank) reader.malformed(which + " has more than " + std::to_string(kMaxRank) + " dimensions");
  std::size_t elements = 1;
  for (std::int64_t d : tensor.dims) {
    if (d < 0 || static_cast<std::uint64_t>(d) > kMaxTensorElements) reader.malformed(which + " has a dimension out of range");
    elements *= static_cast<std::size_t>(d);
    check_count(elements, kMaxTensorElements, reader, "elements in " + which);
  }
  if (type != kFloat && type != kInt64)
    reader.malformed(which + " has element type " + std::to_string(type) + " (only float32 and int64 are read)");
  tensor.is_float = type == kFloat;
  if (has_raw) {
    const std::size_t width = tensor.is_float ? 4 : 8;
    if (raw.size() != elements * width) reader.malformed(which + ": its raw data does not match its dimensions");
    if (tensor.is_float) {
      tensor.floats.resize(elements);
      std::memcpy(tensor.floats.data(), raw.data(), raw.size());
    } else {
      tensor.ints.resize(elements);
      std::memcpy(tensor.ints.data(), raw.data(), raw.size());
    }
  }
  if ((tensor.is_float ? tensor.floats.size() : tensor.ints.size()) != elements)
    reader.malformed(which + " holds " + std::to_string(tensor.is_float ? tensor.floats.size() : tensor.ints.size()) +
                     " values for " + std::to_string(elements) + " elements");
  return tensor;
}

std::pair<std::string, OnnxAttribute> attribute_of(std::span<const std::uint8_t> bytes, const std::string& origin) {
  std::pair<std::string, OnnxAttribute> named;
  OnnxAttribute& a = named.second;
  Reader reader(bytes, origin);
  for (Field f; reader.next(f);) {
    if (f.number == kAttrName && f.type == Length) named.first = text_of(f.bytes, reader);
    if (f.number == kAttrF && f.type == Fixed32) a.f = std::bit_cast<float>(f.fixed32);
    if (f.number == kAttrI && f.type == Varint) a.i = static_cast<std::int64_t>(f.varint);
    if (f.number == kAttrS && f.type == Length) a.s = text_of(f.bytes, reader);
    if (f.number == kAttrT && f.type == Length) {
      std::string unused;
      a.t = tensor_of(f.bytes, origin, unused);
      a.has_tensor = true;
    }
    if (f.number == kAttrFloats) append_floats(f, a.floats, reader);
    if (f.number == kAttrInts) append_ints(f, a.ints, reader, origin);
    check_count(a.ints.size() + a.floats.size(), kMaxAttributeValues, reader, "values in attribute '" + named.first + "'");
  }
  return named;
}

OnnxNode node_of(std::span<const std::uint8_t> bytes, const std::string& origin, std::size_t index) {
  OnnxNode node;
  Reader reader(bytes, origin);
  for (Field f; reader.next(f);) {
    if (f.type != Length) continue;
    if (f.number == kNodeInput) node.inputs.push_back(text_of(f.bytes, reader));
    if (f.number == kNodeOutput) node.outputs.push_back(text_of(f.bytes, reader));
    if (f.number == kNodeName) node.name = text_of(f.bytes, reader);
    if (f.number == kNodeOpType) node.op_type = text_of(f.bytes, reader);
    if (f.number == kNodeDomain) node.domain = text_of(f.bytes, reader);
    if (f.number == kNodeAttribute) {
      check_count(node.attributes.size(), kMaxNodeIo, reader, "attributes on one node");
      node.attributes.insert(attribute_of(f.bytes, origin));
    }
    check_count(node.inputs.size() + node.outputs.size(), kMaxNodeIo, reader, "inputs and outputs on one node");
  }
  if (node.name.empty()) node.name = "#" + std::to_string(index) + " " + node.op_type;
  return node;
}

}  // namespace

const OnnxAttribute* OnnxNode::attribute(const std::string& attribute_name) const {
  const auto found = attributes.find(attribute_name);
  return found == attributes.end() ? nullptr : &found->second;
}

OnnxGraph read_onnx_graph(std::span<const std::uint8_t> model, const std::string& origin) {
  DeclaredGraph declared = read_declared_graph(model, origin);  // also proves there is a graph
  OnnxGraph graph;
  graph.inputs = std::move(declared.inputs);
  graph.outputs = std::move(declared.outputs);
  Reader top(model, origin);
  std::span<const std::uint8_t> graph_bytes;
  for (Field f; top.next(f);)
    if (f.number == kModelGraph && f.type == Length) graph_bytes = f.bytes;
  Reader reader(graph_bytes, origin);
  std::size_t elements = 0;  // of all constants together
  const auto keep_constant = [&](std::string name, OnnxTensor tensor) {
    elements += tensor.is_float ? tensor.floats.size() : tensor.ints.size();
    check_count(elements, kMaxTensorElements, reader, "constant elements in the graph");
    check_count(graph.constants.size(), kMaxNodes, reader, "constant tensors");
    graph.constants[std::move(name)] = std::move(tensor);
  };
  for (Field f; reader.next(f);) {
    if (f.type != Length) continue;
    if (f.number == kGraphInitializer) {
      std::string name;
      OnnxTensor tensor = tensor_of(f.bytes, origin, name);
      keep_constant(std::move(name), std::move(tensor));
    }
    if (f.number != kGraphNode) continue;
    check_count(graph.nodes.size(), kMaxNodes, reader, "nodes");
    OnnxNode node = node_of(f.bytes, origin, graph.nodes.size());
    if (node.op_type == "Constant" && (node.domain.empty() || node.domain == "ai.onnx")) {
      const OnnxAttribute* value = node.attribute("value");
      if (value == nullptr || !value->has_tensor || node.outputs.size() != 1)
        reader.malformed("Constant node '" + node.name + "' has no tensor 'value' (other forms are not read)");
      keep_constant(node.outputs[0], value->t);
      continue;
    }
    graph.nodes.push_back(std::move(node));
  }
  return graph;
}

}  // namespace taconite::onnx

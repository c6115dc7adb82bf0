#include "onnx/declared_graph.hpp"

#include <algorithm>
#include <set>

#include "onnx/protobuf_reader.hpp"

namespace taconite::onnx {

namespace {

// Field numbers of onnx.proto3 (ModelProto.graph, GraphProto.initializer/input/output, ...).
constexpr std::uint64_t kModelGraph = 7;
constexpr std::uint64_t kGraphInitializer = 5, kGraphInput = 11, kGraphOutput = 12;
constexpr std::uint64_t kTensorName = 8;
constexpr std::uint64_t kValueInfoName = 1, kValueInfoType = 2;
constexpr std::uint64_t kTypeTensor = 1, kTensorTypeShape = 2, kShapeDim = 1;
constexpr std::uint64_t kDimValue = 1;
// Bounds on what is kept (the loops are bounded by the bytes; these bound the memory).
constexpr std::size_t kMaxRank = 16;
constexpr std::size_t kMaxDeclared = 4096;
constexpr std::size_t kMaxName = 4096;

std::string text_of(std::span<const std::uint8_t> bytes) {
  return std::string(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(std::min(bytes.size(), kMaxName)));
}

std::vector<std::int64_t> shape_of(std::span<const std::uint8_t> shape, const std::string& origin) {
  std::vector<std::int64_t> dims;
  Reader reader(shape, origin);
  for (Field dim; reader.next(dim);) {
    if (dim.number != kShapeDim || dim.type != Length) continue;
    if (dims.size() == kMaxRank) reader.malformed("a tensor of more than " + std::to_string(kMaxRank) + " dimensions");
    std::int64_t value = kUnknownDim;
    Reader dim_reader(dim.bytes, origin);
    for (Field f; dim_reader.next(f);)
      if (f.number == kDimValue && f.type == Varint) value = static_cast<std::int64_t>(f.varint);
    dims.push_back(value < 0 ? kUnknownDim : value);
  }
  return dims;
}

DeclaredTensor value_info(std::span<const std::uint8_t> bytes, const std::string& origin) {
  DeclaredTensor tensor;
  Reader reader(bytes, origin);
  for (Field f; reader.next(f);) {
    if (f.type != Length) continue;
    if (f.number == kValueInfoName) tensor.name = text_of(f.bytes);
    if (f.number != kValueInfoType) continue;
    Reader type(f.bytes, origin);
    for (Field t; type.next(t);) {
      if (t.number != kTypeTensor || t.type != Length) continue;
      Reader tensor_type(t.bytes, origin);
      for (Field s; tensor_type.next(s);)
        if (s.number == kTensorTypeShape && s.type == Length) tensor.dims = shape_of(s.bytes, origin);
    }
  }
  return tensor;
}

std::string initializer_name(std::span<const std::uint8_t> bytes, const std::string& origin) {
  Reader reader(bytes, origin);
  std::string name;
  for (Field f; reader.next(f);)
    if (f.number == kTensorName && f.type == Length) name = text_of(f.bytes);
  return name;
}

}  // namespace

DeclaredGraph read_declared_graph(std::span<const std::uint8_t> model, const std::string& origin) {
  Reader top(model, origin);
  std::span<const std::uint8_t> graph_bytes;
  bool has_graph = false;
  for (Field f; top.next(f);)
    if (f.number == kModelGraph && f.type == Length) graph_bytes = f.bytes, has_graph = true;
  if (!has_graph) top.malformed("it has no graph");

  DeclaredGraph graph;
  std::set<std::string> initializers;
  Reader reader(graph_bytes, origin);
  for (Field f; reader.next(f);) {
    if (f.type != Length) continue;
    if (graph.inputs.size() + graph.outputs.size() + initializers.size() > kMaxDeclared)
      reader.malformed("more than " + std::to_string(kMaxDeclared) + " graph inputs, outputs and initializers");
    if (f.number == kGraphInitializer) initializers.insert(initializer_name(f.bytes, origin));
    if (f.number == kGraphInput) graph.inputs.push_back(value_info(f.bytes, origin));
    if (f.number == kGraphOutput) graph.outputs.push_back(value_info(f.bytes, origin));
  }
  // Older exporters list the weights among the inputs too; a caller feeds only the others.
  std::erase_if(graph.inputs, [&](const DeclaredTensor& t) { return initializers.count(t.name) > 0; });
  return graph;
}

std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string text;
  for (std::size_t i = 0; i < dims.size(); ++i)
    text += (i ? "x" : "") + (dims[i] == kUnknownDim ? std::string("?") : std::to_string(dims[i]));
  return text.empty() ? "(no declared shape)" : text;
}

}  // namespace taconite::onnx

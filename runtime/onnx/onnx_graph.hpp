// An ONNX model's whole graph (nodes with their attributes, constant tensors, inputs and outputs),
// read straight from the protobuf wire format for the runtimes that run it themselves (the oneDNN
// YuNet network). Sizes are bounded; only float32 and int64 constants are kept (others are
// refused by name); which ops are supported is the runner's business.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "onnx/declared_graph.hpp"

namespace taconite::onnx {

struct OnnxTensor {
  std::vector<std::int64_t> dims;
  std::vector<float> floats;       // float32 tensors
  std::vector<std::int64_t> ints;  // int64 tensors
  bool is_float = false;
};

struct OnnxAttribute {
  std::int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<std::int64_t> ints;
  std::vector<float> floats;
  bool has_tensor = false;
  OnnxTensor t;
};

struct OnnxNode {
  std::string name;     // as the file names it, or "#<index> <op_type>" when unnamed
  std::string op_type;
  std::string domain;   // "" or "ai.onnx" for the standard ops
  std::vector<std::string> inputs;   // "" for an omitted optional input
  std::vector<std::string> outputs;
  std::map<std::string, OnnxAttribute> attributes;

  const OnnxAttribute* attribute(const std::string& attribute_name) const;
};

struct OnnxGraph {
  std::vector<OnnxNode> nodes;                    // in the file's (topological) order
  std::map<std::string, OnnxTensor> constants;    // initializers and Constant nodes' values
  std::vector<DeclaredTensor> inputs;             // graph inputs that are not initializers
  std::vector<DeclaredTensor> outputs;
};

// Bounds on what a graph may hold (YuNet has 110 nodes and 230 kB of weights).
inline constexpr std::size_t kMaxNodes = 4096;
inline constexpr std::size_t kMaxTensorElements = std::size_t{64} << 20;
inline constexpr std::size_t kMaxAttributeValues = 1024;

// Throws Failure(Bundle) "<origin>: ..." when the bytes are not a well-formed ModelProto, or hold
// something kept above its bounds or a constant of another element type (naming the tensor).
OnnxGraph read_onnx_graph(std::span<const std::uint8_t> model, const std::string& origin);

}  // namespace taconite::onnx

// What an ONNX file declares about its graph's inputs and outputs (names and shapes), read straight
// from the protobuf wire format: OpenCV DNN does not report declared shapes, and the loader checks
// them against the model's description before running anything.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace taconite::onnx {

// A dimension that is symbolic (dim_param) or not given.
inline constexpr std::int64_t kUnknownDim = -1;

struct DeclaredTensor {
  std::string name;
  std::vector<std::int64_t> dims;  // kUnknownDim where not a fixed size
};

struct DeclaredGraph {
  std::vector<DeclaredTensor> inputs;   // graph inputs that are not initializers (the ones a caller feeds)
  std::vector<DeclaredTensor> outputs;
};

// Throws Failure(Bundle) "<origin>: ..." when the bytes are not a well-formed ModelProto with a graph.
DeclaredGraph read_declared_graph(std::span<const std::uint8_t> model, const std::string& origin);

// "1x3x112x112" ("?" for an unknown dimension).
std::string dims_text(const std::vector<std::int64_t>& dims);

}  // namespace taconite::onnx

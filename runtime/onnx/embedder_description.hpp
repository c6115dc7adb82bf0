// The description of an ONNX face embedder (docs/models.md): which input and output of the network
// to use, its input size and normalisation, its embedding size and, optionally, its recommended
// cosine threshold. Format "taconite-embedder/1", JSON; members other than these are ignored.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "onnx/onnx_path.hpp"
#include "taconite/model.hpp"

namespace taconite::onnx {

inline constexpr std::string_view kDescriptionFormat = "taconite-embedder/1";
// The bounds of a description's values: an input side, an embedding size, a name's length.
inline constexpr int kMinInputSide = 16;
inline constexpr int kMaxInputSide = 1024;
inline constexpr int kMaxEmbedDim = 65536;
inline constexpr std::size_t kMaxNameLength = 256;

struct EmbedderDescription {
  std::string name;         // `name`
  std::string input_name;   // `input.name`: the network input the face is fed to
  std::string output_name;  // `output.name`: the network output read as the embedding
  int dim = 0;              // `output.dim`
  Preprocessing preprocessing;       // input.width, height, channel_order, mean, std
  std::optional<double> threshold;   // `threshold`, in [-1, 1]
};

// Parses a description. `origin` (the file) starts every error. Throws Failure(Bundle)
// "<origin>: <field>: <what is wrong>" for malformed JSON, a missing member, a wrong type or a
// value out of range.
EmbedderDescription parse_embedder_description(std::string_view text, const std::string& origin);

// Reads and parses the description file: a regular file of at most kMaxDescriptionBytes. Throws
// Failure(Io) naming the file when it cannot be read, else as parse_embedder_description.
EmbedderDescription read_embedder_description(const std::filesystem::path& path);

}  // namespace taconite::onnx

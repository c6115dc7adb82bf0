// ONNX model files: which paths are ONNX models, where their description is by default, and how
// large either file may be: the rules Model::load and the gallery's model fingerprint share.
#pragma once

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <string>

namespace taconite::onnx {

// An ONNX face embedder is MBs (weights); a description a few hundred bytes.
inline constexpr std::uint64_t kMaxModelBytes = 1ull << 30;
inline constexpr std::uint64_t kMaxDescriptionBytes = 1u << 20;

// Whether Model::load reads `path` as an ONNX file: it ends in .onnx (any case). Everything else
// is a bundle directory, with the bundle's errors (e.g. "not a directory").
inline bool is_onnx_path(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension == ".onnx";
}

// The description beside a model: the same path with .json for its extension.
inline std::filesystem::path default_description_path(const std::filesystem::path& model) {
  return std::filesystem::path(model).replace_extension(".json");
}

}  // namespace taconite::onnx

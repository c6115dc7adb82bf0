// What the onnx tests share: the generated tiny models' directory, scratch directories, small file helpers.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace taconite::onnx_tests {

// The directory make_tiny_embedders.py wrote (TACONITE_TEST_ONNX_DIR).
inline std::filesystem::path tiny_dir() {
  const char* dir = std::getenv("TACONITE_TEST_ONNX_DIR");
  return dir ? std::filesystem::path(dir) : std::filesystem::path();
}

// ../shared/realfaces, or "" when this checkout has none.
inline std::filesystem::path realfaces_dir() {
  const char* dir = std::getenv("TACONITE_REALFACES_DIR");
  return dir && std::filesystem::is_directory(dir) ? std::filesystem::path(dir) : std::filesystem::path();
}

inline std::filesystem::path scratch_dir(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("taconite-onnx-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::vector<float> read_floats(const std::filesystem::path& path) {
  const std::string bytes = read_text(path);
  std::vector<float> values(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(values.size() * sizeof(float)),
            reinterpret_cast<char*>(values.data()));
  return values;
}

// `text` with its first `from` replaced by `to`.
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

}  // namespace taconite::onnx_tests

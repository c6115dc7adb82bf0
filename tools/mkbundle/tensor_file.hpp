// Writes tensors.bin + tensors.txt (spec §3): little-endian data, every offset aligned to 64
// bytes, one index line `<name> <dtype> <d0,d1,...> <offset> <bytes>` per tensor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "numerics/bf16.hpp"

namespace taconite::mkbundle {

class TensorFileWriter {
 public:
  enum class Mode { Create, Append };
  // Throws std::runtime_error naming the file on any I/O failure.
  TensorFileWriter(const std::filesystem::path& bundle_dir, Mode mode);

  void add_bf16(const std::string& name, const std::vector<std::size_t>& shape, std::span<const numerics::bf16_t> values);
  void add_f32(const std::string& name, const std::vector<std::size_t>& shape, std::span<const float> values);
  void close();  // flushes both files; the destructor does not report errors

  std::uint64_t data_bytes() const { return offset_; }
  std::size_t count() const { return names_.size(); }

 private:
  void add(const std::string& name, const char* dtype, const std::vector<std::size_t>& shape, const void* data,
           std::size_t element_size, std::size_t elements);
  void check(const std::ofstream& stream, const std::filesystem::path& path, const char* what) const;

  std::filesystem::path bin_path_, txt_path_;
  std::ofstream bin_, txt_;
  std::uint64_t offset_ = 0;
  std::set<std::string> names_;
};

}  // namespace taconite::mkbundle

// tensors.txt + tensors.bin (spec §3): the index, validated line by line, over a read-only mapping.
// Views are zero-copy and live as long as the store, or until release().
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bundle/mapped_file.hpp"

namespace taconite::bundle {

inline constexpr std::string_view kTensorIndexFile = "tensors.txt";
inline constexpr std::string_view kTensorDataFile = "tensors.bin";

enum class DType { F32, BF16, U8, I32 };
const char* to_string(DType dtype);
std::size_t element_size(DType dtype);

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::uint64_t> shape;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;  // elements
  int line = 0;             // in tensors.txt
  std::string text;

  std::string location() const;  // "tensors.txt:<line>"
};

class TensorStore {
 public:
  // Throws Failure(Io) for unreadable files, Failure(Bundle) naming tensors.txt:<line> otherwise.
  static TensorStore open(const std::filesystem::path& bundle_dir);
  // For tests: an index over an in-memory blob size (no data).
  static TensorStore parse_index(std::string_view index_text, std::uint64_t data_size);

  const TensorInfo* find(std::string_view name) const;

  // The end of the load (MappedFile): the bytes become a private copy at the same address, or
  // are dropped (views become invalid, typed views of the store empty).
  void copy_into_memory() { data_.copy_into_memory(); }
  void release() noexcept { data_.release(); }
  const std::map<std::string, TensorInfo, std::less<>>& tensors() const { return tensors_; }

  // Typed views; the caller has checked dtype (the plan does, naming the manifest line).
  std::span<const std::uint16_t> bf16(const TensorInfo& info) const { return view<std::uint16_t>(info); }
  std::span<const float> f32(const TensorInfo& info) const { return view<float>(info); }
  std::span<const std::uint8_t> u8(const TensorInfo& info) const { return view<std::uint8_t>(info); }
  std::span<const std::int32_t> i32(const TensorInfo& info) const { return view<std::int32_t>(info); }

 private:
  template <typename T>
  std::span<const T> view(const TensorInfo& info) const {
    if (data_.size() == 0) return {};
    return {reinterpret_cast<const T*>(data_.bytes().data() + info.offset), static_cast<std::size_t>(info.count)};
  }

  MappedFile data_;
  std::map<std::string, TensorInfo, std::less<>> tensors_;
};

}  // namespace taconite::bundle

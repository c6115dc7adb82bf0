#include "bundle/tensor_store.hpp"

#include <limits>

#include "bundle/text_lines.hpp"
#include "common/failure.hpp"

namespace taconite::bundle {

const char* to_string(DType dtype) {
  switch (dtype) {
    case DType::F32: return "f32";
    case DType::BF16: return "bf16";
    case DType::U8: return "u8";
    case DType::I32: return "i32";
  }
  return "?";
}

std::size_t element_size(DType dtype) {
  switch (dtype) {
    case DType::F32: return 4;
    case DType::BF16: return 2;
    case DType::U8: return 1;
    case DType::I32: return 4;
  }
  return 1;
}

std::string TensorInfo::location() const { return std::string(kTensorIndexFile) + ":" + std::to_string(line); }

namespace {

constexpr std::uint64_t kMaxU64 = std::numeric_limits<std::uint64_t>::max();

bool parse_dtype(std::string_view text, DType& dtype) {
  if (text == "f32") dtype = DType::F32;
  else if (text == "bf16") dtype = DType::BF16;
  else if (text == "u8") dtype = DType::U8;
  else if (text == "i32") dtype = DType::I32;
  else return false;
  return true;
}

TensorInfo parse_tensor_line(const TextLine& line, std::uint64_t data_size) {
  auto bad = [&](const std::string& problem) {
    fail(ErrorKind::Bundle, located_message(kTensorIndexFile, line.number, line.text, problem));
  };
  const std::vector<std::string_view> tokens = split_ascii_whitespace(line.text);
  if (tokens.size() != 5)
    bad("expected 5 fields <name> <dtype> <d0,d1,...> <offset> <bytes>, got " + std::to_string(tokens.size()));

  TensorInfo info;
  info.name = std::string(tokens[0]);
  info.line = line.number;
  info.text = std::string(line.text);
  if (!parse_dtype(tokens[1], info.dtype)) bad("unknown dtype '" + std::string(tokens[1]) + "' (f32, bf16, u8, i32)");

  std::uint64_t shape_product = 1;
  std::string_view dims = tokens[2];
  while (true) {
    const std::size_t comma = dims.find(',');
    std::uint64_t dim = 0;
    if (!parse_u64(dims.substr(0, comma), kMaxU64, dim)) bad("bad shape '" + std::string(tokens[2]) + "'");
    if (dim != 0 && shape_product > kMaxU64 / dim) bad("shape '" + std::string(tokens[2]) + "' overflows");
    shape_product *= dim;
    info.shape.push_back(dim);
    if (comma == std::string_view::npos) break;
    dims.remove_prefix(comma + 1);
  }

  if (!parse_u64(tokens[3], kMaxU64, info.offset)) bad("bad offset '" + std::string(tokens[3]) + "'");
  if (!parse_u64(tokens[4], kMaxU64, info.bytes)) bad("bad byte count '" + std::string(tokens[4]) + "'");
  if (info.offset % 8 != 0) bad("offset " + std::to_string(info.offset) + " is not a multiple of 8");
  const std::uint64_t esize = element_size(info.dtype);
  if (info.bytes % esize != 0)
    bad(std::to_string(info.bytes) + " bytes is not a whole number of " + to_string(info.dtype) + " elements");
  info.count = info.bytes / esize;
  if (info.offset > data_size || info.bytes > data_size - info.offset)
    bad("offset " + std::to_string(info.offset) + " + " + std::to_string(info.bytes) + " bytes exceeds " +
        std::string(kTensorDataFile) + " (" + std::to_string(data_size) + " bytes)");
  if (shape_product != info.count)
    bad("shape holds " + std::to_string(shape_product) + " elements but the bytes hold " + std::to_string(info.count));
  return info;
}

// The spec defines tensors.txt lines as five-field records and says nothing of comments, so a
// name may start with '#'. A '#' line is taken as a comment only when it cannot be a record:
// not five fields, or no dtype in the second.
bool is_comment(std::string_view trimmed) {
  if (trimmed.front() != '#') return false;
  const std::vector<std::string_view> tokens = split_ascii_whitespace(trimmed);
  DType dtype{};
  return tokens.size() != 5 || !parse_dtype(tokens[1], dtype);
}

std::map<std::string, TensorInfo, std::less<>> parse_tensor_index(std::string_view text, std::uint64_t data_size) {
  std::map<std::string, TensorInfo, std::less<>> tensors;
  for (const TextLine& line : split_lines(text)) {
    const std::string_view trimmed = trim_ascii_whitespace(line.text);
    if (trimmed.empty() || is_comment(trimmed)) continue;
    TensorInfo info = parse_tensor_line(line, data_size);
    if (auto it = tensors.find(info.name); it != tensors.end())
      fail(ErrorKind::Bundle, located_message(kTensorIndexFile, line.number, line.text,
                                              "tensor '" + info.name + "' defined twice (first at line " +
                                                  std::to_string(it->second.line) + ")"));
    tensors.emplace(info.name, std::move(info));
  }
  return tensors;
}

}  // namespace

TensorStore TensorStore::open(const std::filesystem::path& bundle_dir) {
  TensorStore store;
  store.data_ = MappedFile::open_read_only(bundle_dir / kTensorDataFile);
  const std::string index = read_text_file(bundle_dir / kTensorIndexFile);
  store.tensors_ = parse_tensor_index(index, store.data_.size());
  return store;
}

TensorStore TensorStore::parse_index(std::string_view index_text, std::uint64_t data_size) {
  TensorStore store;
  store.tensors_ = parse_tensor_index(index_text, data_size);
  return store;
}

const TensorInfo* TensorStore::find(std::string_view name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

}  // namespace taconite::bundle

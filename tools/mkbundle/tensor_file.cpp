#include "tensor_file.hpp"

#include <bit>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace taconite::mkbundle {

static_assert(std::endian::native == std::endian::little, "the bundle format is little-endian");

namespace {

constexpr std::uint64_t kAlignment = 64;

std::set<std::string> read_existing_names(const std::filesystem::path& txt) {
  std::set<std::string> names;
  std::ifstream in(txt);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name;
    if (fields >> name) names.insert(name);
  }
  return names;
}

}  // namespace

TensorFileWriter::TensorFileWriter(const std::filesystem::path& dir, Mode mode)
    : bin_path_(dir / "tensors.bin"), txt_path_(dir / "tensors.txt") {
  const auto flags = std::ios::binary | (mode == Mode::Append ? std::ios::app : std::ios::trunc);
  if (mode == Mode::Append) {
    std::error_code ec;
    offset_ = std::filesystem::file_size(bin_path_, ec);
    if (ec) throw std::runtime_error(bin_path_.string() + ": " + ec.message());
    names_ = read_existing_names(txt_path_);
  }
  bin_.open(bin_path_, flags);
  check(bin_, bin_path_, "cannot open");
  txt_.open(txt_path_, mode == Mode::Append ? std::ios::app : std::ios::trunc);
  check(txt_, txt_path_, "cannot open");
}

void TensorFileWriter::check(const std::ofstream& stream, const std::filesystem::path& path, const char* what) const {
  if (!stream) throw std::runtime_error(path.string() + ": " + what + " (" + std::strerror(errno) + ")");
}

void TensorFileWriter::add(const std::string& name, const char* dtype, const std::vector<std::size_t>& shape,
                           const void* data, std::size_t element_size, std::size_t elements) {
  if (!names_.insert(name).second) throw std::logic_error("tensor '" + name + "' written twice");
  std::size_t product = 1;
  for (std::size_t d : shape) product *= d;
  if (product != elements)
    throw std::logic_error("tensor '" + name + "': shape holds " + std::to_string(product) + " elements, data " +
                           std::to_string(elements));
  const std::uint64_t padding = (kAlignment - offset_ % kAlignment) % kAlignment;
  static const char zeros[kAlignment] = {};
  bin_.write(zeros, static_cast<std::streamsize>(padding));
  offset_ += padding;
  const std::uint64_t bytes = static_cast<std::uint64_t>(element_size) * elements;
  bin_.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  check(bin_, bin_path_, "write failed");

  std::string dims;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) dims += ',';
    dims += std::to_string(shape[i]);  // appended, not `"," + to_string()`: GCC 12 -O3 -Wrestrict false positive
  }
  txt_ << name << ' ' << dtype << ' ' << dims << ' ' << offset_ << ' ' << bytes << '\n';
  check(txt_, txt_path_, "write failed");
  offset_ += bytes;
}

void TensorFileWriter::add_bf16(const std::string& name, const std::vector<std::size_t>& shape,
                                std::span<const numerics::bf16_t> values) {
  add(name, "bf16", shape, values.data(), sizeof(numerics::bf16_t), values.size());
}

void TensorFileWriter::add_f32(const std::string& name, const std::vector<std::size_t>& shape,
                               std::span<const float> values) {
  add(name, "f32", shape, values.data(), sizeof(float), values.size());
}

void TensorFileWriter::close() {
  bin_.close();
  check(bin_, bin_path_, "close failed");
  txt_.close();
  check(txt_, txt_path_, "close failed");
}

}  // namespace taconite::mkbundle

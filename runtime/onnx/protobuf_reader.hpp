// Walking one protobuf message's fields straight from the wire format (ONNX files are protobuf):
// every length is checked against the bytes, so a truncated or hostile file fails with a message.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "common/failure.hpp"

namespace taconite::onnx {

enum WireType : unsigned { Varint = 0, Fixed64 = 1, Length = 2, Fixed32 = 5 };

struct Field {
  std::uint64_t number = 0;
  WireType type = Varint;
  std::uint64_t varint = 0;             // Varint
  std::uint32_t fixed32 = 0;            // Fixed32 (a float's bits)
  std::span<const std::uint8_t> bytes;  // Length
};

class Reader {
 public:
  Reader(std::span<const std::uint8_t> bytes, const std::string& origin) : bytes_(bytes), origin_(origin) {}

  bool next(Field& field) {
    if (at_ == bytes_.size()) return false;
    const std::uint64_t key = varint();
    field.number = key >> 3;
    field.type = static_cast<WireType>(key & 7);
    switch (field.type) {
      case Varint: field.varint = varint(); break;
      case Fixed64: skip(8); break;
      case Fixed32:
        skip(4);
        std::memcpy(&field.fixed32, bytes_.data() + at_ - 4, 4);
        break;
      case Length: {
        const std::uint64_t size = varint();
        if (size > bytes_.size() - at_) malformed("a field runs past the end of the file");
        field.bytes = bytes_.subspan(at_, static_cast<std::size_t>(size));
        at_ += static_cast<std::size_t>(size);
        break;
      }
      default: malformed("unsupported protobuf wire type " + std::to_string(key & 7));
    }
    return true;
  }

  // The next varint of a packed repeated field (the reader walks the packed bytes).
  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ == bytes_.size()) malformed("a number runs past the end of the file");
      const std::uint8_t byte = bytes_[at_++];
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    malformed("a number longer than 10 bytes");
  }

  bool done() const { return at_ == bytes_.size(); }

  [[noreturn]] void malformed(const std::string& problem) const {
    fail(ErrorKind::Bundle, origin_ + ": not an ONNX model (" + problem + ")");
  }

 private:
  void skip(std::size_t n) {
    if (n > bytes_.size() - at_) malformed("a field runs past the end of the file");
    at_ += n;
  }

  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
  const std::string& origin_;
};

}  // namespace taconite::onnx

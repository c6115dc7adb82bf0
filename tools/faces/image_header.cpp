#include "image_header.hpp"

#include <cstring>
#include <optional>

namespace taconite::faces {

namespace {

// Bounds-checked reads of `bytes`: nullopt past the end.
class Bytes {
 public:
  explicit Bytes(std::span<const std::uint8_t> bytes) : b_(bytes) {}
  std::size_t size() const { return b_.size(); }
  bool starts_with(std::size_t at, const char* text) const {
    const std::size_t n = std::strlen(text);
    return at + n <= b_.size() && std::memcmp(b_.data() + at, text, n) == 0;
  }
  std::optional<std::uint32_t> be(std::size_t at, int n) const { return read(at, n, true); }
  std::optional<std::uint32_t> le(std::size_t at, int n) const { return read(at, n, false); }
  std::optional<std::uint32_t> read(std::size_t at, int n, bool big_endian) const {
    if (at + static_cast<std::size_t>(n) > b_.size()) return std::nullopt;
    std::uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      const std::uint32_t byte = b_[at + static_cast<std::size_t>(big_endian ? i : n - 1 - i)];
      v = (v << 8) | byte;
    }
    return v;
  }

 private:
  std::span<const std::uint8_t> b_;
};

using Found = std::optional<ImageSize>;  // nullopt: the header is cut short or inconsistent

Found sized(std::optional<std::uint32_t> w, std::optional<std::uint32_t> h, const char* format) {
  if (!w || !h) return std::nullopt;
  return ImageSize{*w, *h, format};
}

Found png(const Bytes& b) {
  if (!b.starts_with(12, "IHDR")) return std::nullopt;
  return sized(b.be(16, 4), b.be(20, 4), "PNG");
}

// Walks the marker segments to the first start-of-frame (SOF0..SOF15 but DHT, JPG and DAC).
Found jpeg(const Bytes& b) {
  std::size_t at = 2;
  for (;;) {
    std::optional<std::uint32_t> ff = b.be(at, 1);
    while (ff && *ff == 0xFF && b.be(at + 1, 1) == 0xFFu) ff = b.be(++at, 1);  // fill bytes
    const std::optional<std::uint32_t> marker = b.be(at + 1, 1);
    if (!ff || *ff != 0xFF || !marker) return std::nullopt;
    if (*marker == 0x01 || (*marker >= 0xD0 && *marker <= 0xD7)) {  // no length
      at += 2;
      continue;
    }
    if (*marker == 0xD9 || *marker == 0xDA) return std::nullopt;  // image data before any frame header
    const std::optional<std::uint32_t> length = b.be(at + 2, 2);
    if (!length || *length < 2) return std::nullopt;
    if (*marker >= 0xC0 && *marker <= 0xCF && *marker != 0xC4 && *marker != 0xC8 && *marker != 0xCC)
      return sized(b.be(at + 7, 2), b.be(at + 5, 2), "JPEG");
    at += 2 + *length;
  }
}

Found bmp(const Bytes& b) {
  const std::optional<std::uint32_t> header = b.le(14, 4);
  if (!header) return std::nullopt;
  if (*header == 12) return sized(b.le(18, 2), b.le(20, 2), "BMP");
  const std::optional<std::uint32_t> w = b.le(18, 4), h = b.le(22, 4);
  if (!w || !h) return std::nullopt;
  const auto height = static_cast<std::int32_t>(*h);  // negative: stored top-down
  return ImageSize{static_cast<std::int32_t>(*w), height < 0 ? -static_cast<std::int64_t>(height) : height, "BMP"};
}

Found webp(const Bytes& b) {
  if (b.starts_with(12, "VP8 ")) {
    if (b.be(23, 1) != 0x9Du || b.be(24, 1) != 0x01u || b.be(25, 1) != 0x2Au) return std::nullopt;
    const std::optional<std::uint32_t> w = b.le(26, 2), h = b.le(28, 2);
    if (!w || !h) return std::nullopt;
    return ImageSize{*w & 0x3FFF, *h & 0x3FFF, "WebP"};
  }
  if (b.starts_with(12, "VP8L")) {
    const std::optional<std::uint32_t> bits = b.le(21, 4);
    if (b.be(20, 1) != 0x2Fu || !bits) return std::nullopt;
    return ImageSize{(*bits & 0x3FFF) + 1, ((*bits >> 14) & 0x3FFF) + 1, "WebP"};
  }
  if (b.starts_with(12, "VP8X")) {
    const std::optional<std::uint32_t> w = b.le(24, 3), h = b.le(27, 3);
    if (!w || !h) return std::nullopt;
    return ImageSize{std::int64_t{*w} + 1, std::int64_t{*h} + 1, "WebP"};
  }
  return std::nullopt;
}

// The first directory's ImageWidth (256) and ImageLength (257), SHORT or LONG.
Found tiff(const Bytes& b) {
  const bool big = b.starts_with(0, "MM");
  const std::optional<std::uint32_t> directory = b.read(4, 4, big);
  if (!directory) return std::nullopt;
  const std::optional<std::uint32_t> entries = b.read(*directory, 2, big);
  if (!entries) return std::nullopt;
  std::optional<std::uint32_t> w, h;
  for (std::uint32_t i = 0; i < *entries; ++i) {
    const std::size_t entry = std::size_t{*directory} + 2 + std::size_t{i} * 12;
    const std::optional<std::uint32_t> tag = b.read(entry, 2, big), type = b.read(entry + 2, 2, big);
    if (!tag || !type) return std::nullopt;
    if (*tag != 256 && *tag != 257) continue;
    const std::optional<std::uint32_t> value = *type == 3 ? b.read(entry + 8, 2, big) : b.read(entry + 8, 4, big);
    (*tag == 256 ? w : h) = value;
  }
  return sized(w, h, "TIFF");
}

// "P1".."P6", then width and height as decimal text among white space and # comments.
Found pnm(const Bytes& b) {
  std::size_t at = 2;
  std::optional<std::uint32_t> numbers[2];
  for (std::optional<std::uint32_t>& n : numbers) {
    for (;;) {  // white space and comments
      const std::optional<std::uint32_t> c = b.be(at, 1);
      if (!c) return std::nullopt;
      if (*c == '#') {
        while (b.be(at, 1) && b.be(at, 1) != std::uint32_t{'\n'}) ++at;
      } else if (*c == ' ' || *c == '\t' || *c == '\r' || *c == '\n') {
        ++at;
      } else {
        break;
      }
    }
    std::uint64_t value = 0;
    int digits = 0;
    for (std::optional<std::uint32_t> c; (c = b.be(at, 1)) && *c >= '0' && *c <= '9'; ++at, ++digits) {
      if (digits == 9) return std::nullopt;  // no PNM side has ten digits
      value = value * 10 + (*c - '0');
    }
    if (digits == 0) return std::nullopt;
    n = static_cast<std::uint32_t>(value);
  }
  return sized(numbers[0], numbers[1], "PNM");
}

}  // namespace

Result<ImageSize> read_image_size(std::span<const std::uint8_t> file) {
  const Bytes b(file);
  Found found;
  const char* format = nullptr;
  if (b.starts_with(0, "\x89PNG\r\n\x1a\n")) {
    format = "PNG";
    found = png(b);
  } else if (b.be(0, 2) == 0xFFD8u) {
    format = "JPEG";
    found = jpeg(b);
  } else if (b.starts_with(0, "BM")) {
    format = "BMP";
    found = bmp(b);
  } else if (b.starts_with(0, "RIFF") && b.starts_with(8, "WEBP")) {
    format = "WebP";
    found = webp(b);
  } else if (b.starts_with(0, "II*") || b.starts_with(0, "MM")) {
    format = "TIFF";
    if (b.be(2, 2) == (b.starts_with(0, "II") ? 0x2A00u : 0x002Au)) found = tiff(b);
  } else if (b.size() >= 2 && file[0] == 'P' && file[1] >= '1' && file[1] <= '6') {
    format = "PNM";
    found = pnm(b);
  } else {
    return Error{ErrorKind::Input, "not a PNG, JPEG, BMP, WebP, TIFF or PNM (PBM/PGM/PPM) image"};
  }
  if (!found || found->width <= 0 || found->height <= 0)
    return Error{ErrorKind::Input, std::string("a ") + format + " header that is cut short or gives no image size"};
  return *found;
}

}  // namespace taconite::faces

// The pixel size an image file declares in its header, read without decoding it, so enrollment
// refuses an oversized image before the decoder allocates its pixels (a 20000x20000 PNG took
// 1.4 GB and 34 s to decode only to be refused). OpenCV 4.6 has no public header-only read.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "taconite/error.hpp"

namespace taconite::faces {

struct ImageSize {
  std::int64_t width = 0, height = 0;
  std::string format;  // "PNG", "JPEG", ...
};

// The size in the PNG, JPEG, BMP, WebP, TIFF or PNM (PBM/PGM/PPM) header that `file` starts with.
// Input error for another format, or a header that is cut short or gives no size.
Result<ImageSize> read_image_size(std::span<const std::uint8_t> file);

}  // namespace taconite::faces

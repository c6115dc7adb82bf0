// An image that arrived in a request body, decoded with the checks tools/faces makes for a file:
// its header's pixel size (image_header.hpp) is bounded before the decoder allocates anything, so a
// 20000x20000 PNG or a truncated header is refused without being decoded.
#pragma once

#include <cstdint>
#include <opencv2/core.hpp>
#include <span>
#include <string>

#include "taconite/error.hpp"

namespace taconite::app {

// `bytes` decoded as 8-bit BGR. Input error naming `what` (e.g. the upload's file name) for a body
// that is no image of a known format, a header giving more than `max_pixels`, or bytes the
// decoder cannot read (a truncated file).
Result<cv::Mat> decode_uploaded_image(std::span<const std::uint8_t> bytes, long long max_pixels,
                                      const std::string& what);

}  // namespace taconite::app

// A still image read for enrolment, match and calibrate, with its input checks made before
// anything is decoded: a regular file (a FIFO or device is refused, never waited on) of at most
// kMaxImageFileBytes whose header (image_header.hpp) gives at most kMaxImagePixels.
#pragma once

#include <cstdint>
#include <opencv2/core.hpp>
#include <string>

#include "taconite/error.hpp"

namespace taconite::faces {

inline constexpr long long kMaxImagePixels = 64LL << 20;  // larger images are refused (memory bound)
inline constexpr std::uint64_t kMaxImageFileBytes = std::uint64_t{512} << 20;

// The image at `path`, decoded as 8-bit BGR. Errors name the path and the reason.
Result<cv::Mat> read_image(const std::string& path);

}  // namespace taconite::faces

#include "uploaded_image.hpp"

#include <algorithm>
#include <opencv2/imgcodecs.hpp>
#include <vector>

#include "image_header.hpp"

namespace taconite::app {

Result<cv::Mat> decode_uploaded_image(std::span<const std::uint8_t> bytes, long long max_pixels,
                                      const std::string& what) {
  Result<faces::ImageSize> size = faces::read_image_size(bytes);
  if (!size) return Error{ErrorKind::Input, what + ": " + size.error().message};
  const faces::ImageSize& s = size.value();
  if (s.width <= 0 || s.height <= 0 || s.width > max_pixels / s.height)
    return Error{ErrorKind::Input, what + ": its " + s.format + " header gives " + std::to_string(s.width) + "x" +
                                       std::to_string(s.height) + " pixels, more than the " +
                                       std::to_string(max_pixels) + " allowed (refused before decoding)"};
  // libjpeg decodes a cut-short JPEG with the missing rows grey, and only warns: a photo that was
  // not uploaded whole is refused instead (its end-of-image marker must be near the end).
  if (s.format == "JPEG") {
    const std::size_t tail = std::min<std::size_t>(bytes.size(), 1024);
    bool end_marker = false;
    for (std::size_t i = bytes.size() - tail; i + 1 < bytes.size(); ++i)
      end_marker = end_marker || (bytes[i] == 0xFF && bytes[i + 1] == 0xD9);
    if (!end_marker)
      return Error{ErrorKind::Input, what + ": a JPEG without its end (truncated?)"};
  }
  if (bytes.size() > static_cast<std::size_t>(INT32_MAX))
    return Error{ErrorKind::Input, what + ": " + std::to_string(bytes.size()) + " bytes, too big to decode"};
  cv::Mat image;
  try {
    // imdecode wants a Mat; this one only wraps the bytes.
    const cv::Mat raw(1, static_cast<int>(bytes.size()), CV_8UC1, const_cast<std::uint8_t*>(bytes.data()));
    image = cv::imdecode(raw, cv::IMREAD_COLOR);
  } catch (const cv::Exception& e) {
    return Error{ErrorKind::Input, what + ": cannot be decoded (" + e.what() + ")"};
  }
  if (image.empty()) return Error{ErrorKind::Input, what + ": not a readable " + s.format + " image (truncated?)"};
  if (static_cast<long long>(image.cols) * image.rows > max_pixels)
    return Error{ErrorKind::Input, what + ": " + std::to_string(image.cols) + "x" + std::to_string(image.rows) +
                                       " pixels, more than the " + std::to_string(max_pixels) + " allowed"};
  return image;
}

}  // namespace taconite::app

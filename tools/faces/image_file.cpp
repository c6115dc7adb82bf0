#include "image_file.hpp"

#include <opencv2/imgcodecs.hpp>
#include <vector>

#include "bundle/regular_file.hpp"
#include "common/failure.hpp"
#include "image_header.hpp"

namespace taconite::faces {

Result<cv::Mat> read_image(const std::string& path) {
  // Read through one descriptor opened without blocking: a FIFO is refused, not waited on, and
  // the bytes checked are the bytes decoded.
  std::vector<std::uint8_t> bytes;
  try {
    const bundle::RegularFile file = bundle::RegularFile::open(path);
    if (file.size() > kMaxImageFileBytes)
      return Error{ErrorKind::Input, path + ": " + std::to_string(file.size()) + " bytes, more than the " +
                                         std::to_string(kMaxImageFileBytes >> 20) + " MiB an image file may have"};
    bytes.resize(static_cast<std::size_t>(file.size()));
    file.read_all(bytes.data());
  } catch (const Failure& f) {
    return f.error();
  }
  Result<ImageSize> size = read_image_size(bytes);
  if (!size) return Error{ErrorKind::Input, path + ": " + size.error().message};
  const ImageSize& s = size.value();
  if (s.width > kMaxImagePixels / s.height)
    return Error{ErrorKind::Input, path + ": its " + s.format + " header gives " + std::to_string(s.width) + "x" +
                                       std::to_string(s.height) + " pixels, more than " +
                                       std::to_string(kMaxImagePixels) + " allowed (refused from the header, before decoding)"};
  cv::Mat image;
  try {
    image = cv::imdecode(bytes, cv::IMREAD_COLOR);
  } catch (const cv::Exception& e) {
    return Error{ErrorKind::Io, path + ": cannot be decoded (" + e.what() + ")"};
  }
  if (image.empty()) return Error{ErrorKind::Io, path + ": not a readable image"};
  // The decoder's own size is checked too, should it ever disagree with the header.
  if (static_cast<long long>(image.cols) * image.rows > kMaxImagePixels)
    return Error{ErrorKind::Input, path + ": " + std::to_string(image.cols) + "x" + std::to_string(image.rows) +
                                       " pixels, more than " + std::to_string(kMaxImagePixels) + " allowed"};
  return image;
}

}  // namespace taconite::faces

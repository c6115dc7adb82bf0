#include "face_input.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

namespace taconite::cli {

Result<OwnedFace> read_face_image(const std::string& path, const Preprocessing& model) {
  const int height = model.height, width = model.width;
  std::ifstream probe(path, std::ios::binary);
  if (!probe) return Error{ErrorKind::Io, path + ": cannot open: " + std::strerror(errno)};
  // Our error line is the report; OpenCV's own warnings would only repeat it.
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  const cv::Mat bgr = cv::imread(path, cv::IMREAD_COLOR);
  if (bgr.empty()) return Error{ErrorKind::Input, path + ": cannot decode the image (not a format OpenCV reads)"};
  cv::Mat resized, ordered;
  if (bgr.rows != height || bgr.cols != width)
    cv::resize(bgr, resized, cv::Size(width, height), 0, 0, cv::INTER_AREA);
  else
    resized = bgr;
  if (model.channel_order == PlaneOrder::Bgr) ordered = resized;  // OpenCV decodes to B,G,R already
  else cv::cvtColor(resized, ordered, cv::COLOR_BGR2RGB);
  OwnedFace face{std::vector<float>(static_cast<std::size_t>(3) * height * width), 3, height, width};
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const cv::Vec3b& pixel = ordered.at<cv::Vec3b>(y, x);
      for (int c = 0; c < 3; ++c)
        face.data[(static_cast<std::size_t>(c) * height + y) * width + x] =
            (pixel[c] / 255.0f - model.mean[c]) / model.std_dev[c];
    }
  return face;
}

Result<OwnedFace> read_face_f32(const std::string& path, int height, int width) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return Error{ErrorKind::Io, path + ": cannot open: " + std::strerror(errno)};
  const auto bytes = static_cast<std::size_t>(in.tellg());
  const std::size_t plane = static_cast<std::size_t>(height) * width * sizeof(float);
  if (bytes == 0 || bytes % plane != 0)
    return Error{ErrorKind::Input, path + ": " + std::to_string(bytes) + " bytes is not a whole number of " +
                                       std::to_string(width) + "x" + std::to_string(height) + " f32 channels"};
  OwnedFace face{std::vector<float>(bytes / sizeof(float)), static_cast<int>(bytes / plane), height, width};
  in.seekg(0);
  in.read(reinterpret_cast<char*>(face.data.data()), static_cast<std::streamsize>(bytes));
  if (!in) return Error{ErrorKind::Io, path + ": read failed"};
  return face;
}

std::optional<Error> write_f32(const std::string& path, const std::vector<float>& values) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  if (!out) return Error{ErrorKind::Io, path + ": cannot write: " + std::strerror(errno)};
  return std::nullopt;
}

}  // namespace taconite::cli

#include "face_jpeg_writer.hpp"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

namespace taconite::gst {

std::vector<unsigned char> encode_rgb_jpeg(const cv::Mat& rgb, int quality) {
  std::vector<unsigned char> jpeg;
  if (rgb.empty()) return jpeg;
  cv::Mat bgr;
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);  // OpenCV's encoders read BGR
  if (!cv::imencode(".jpg", bgr, jpeg, {cv::IMWRITE_JPEG_QUALITY, quality})) jpeg.clear();
  return jpeg;
}

}  // namespace taconite::gst

#include "best_face_crop.hpp"

#include <optional>

#include "readable_frame.hpp"
#include "roi_landmarks.hpp"

namespace taconite::gst {

bool crop_improved_faces(GstBuffer* buffer, const GstVideoInfo* info, std::span<const ImprovedFace> faces,
                         const WantCrop& want, const TakeCrop& take, std::string* problem) {
  if (faces.empty()) return true;
  if (!info) {
    *problem = "its caps are not raw video in system memory";
    return false;
  }
  ReadableFrame frame;
  bool mapped = false;
  for (const ImprovedFace& face : faces) {
    if (!want(face)) continue;
    if (!mapped) {
      const Status map = frame.map(*info, buffer);
      if (!map) {
        *problem = map.error().message;
        return false;
      }
      mapped = true;
    }
    std::string rejected;
    const std::optional<cv::Matx23d> to_template =
        roi_alignment(face.roi, info->width, info->height, kBestFaceSize, kBestFaceSize, &rejected);
    if (!to_template) continue;  // no landmarks: no picture of this face
    take(face, vision::aligned_face_rgb(frame.view(), *to_template, kBestFaceSize, kBestFaceSize));
  }
  return true;
}

}  // namespace taconite::gst

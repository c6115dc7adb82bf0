#include "best_face_crop.hpp"

#include <optional>

#include "readable_frame.hpp"
#include "roi_landmarks.hpp"

namespace taconite::gst {

Status crop_improved_faces(GstBuffer* buffer, const GstVideoInfo* info, std::span<const ImprovedFace> faces,
                           const WantCrop& want, const TakeCrop& take) {
  if (faces.empty()) return Ok{};
  if (!info) return Error{ErrorKind::Input, "its caps are not raw video in system memory"};
  ReadableFrame frame;
  bool mapped = false;
  for (const ImprovedFace& face : faces) {
    if (!want(face)) continue;
    if (!mapped) {
      if (Status map = frame.map(*info, buffer); !map) return map;
      mapped = true;
    }
    std::string rejected;
    const std::optional<cv::Matx23d> to_template =
        roi_alignment(face.roi, info->width, info->height, kBestFaceSize, kBestFaceSize, &rejected);
    if (!to_template) continue;  // no landmarks: no picture of this face
    take(face, vision::aligned_face_rgb(frame.view(), *to_template, kBestFaceSize, kBestFaceSize));
  }
  return Ok{};
}

}  // namespace taconite::gst

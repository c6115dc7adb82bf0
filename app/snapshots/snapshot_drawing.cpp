#include "snapshot_drawing.hpp"

#include <cstdio>
#include <opencv2/imgproc.hpp>

namespace taconite::app {

std::string snapshot_label(const std::string& label_state, const std::optional<std::string>& label,
                           const std::optional<double>& confidence, std::int64_t track_id) {
  std::string text = label ? *label : label_state == "unknown" ? "unknown" : "track " + std::to_string(track_id);
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  if (text.size() > 40) text = text.substr(0, 40);
  if (confidence && label_state == "known") {
    char number[16];
    std::snprintf(number, sizeof number, " %.2f", *confidence);
    text += number;
  }
  return text;
}

cv::Scalar identity_colour(const std::string& label_state) {
  if (label_state == "known") return {60, 200, 60};
  if (label_state == "unknown") return {0, 140, 255};
  return {0, 220, 220};
}

cv::Mat draw_snapshot(const KeptFrame& frame, const KeptFace& face, const std::string& label_state,
                      const std::string& label) {
  cv::Mat bgr;
  cv::cvtColor(frame.rgb, bgr, cv::COLOR_RGB2BGR);
  const int thick = std::max(2, bgr.cols / 400);
  for (const KeptFace& other : frame.faces)
    if (other.box != face.box) cv::rectangle(bgr, other.box, {160, 160, 160}, 1);
  const cv::Scalar colour = identity_colour(label_state);
  cv::rectangle(bgr, face.box, colour, thick);
  const double scale = std::max(0.5, bgr.cols / 1600.0);
  int baseline = 0;
  const cv::Size size = cv::getTextSize(label, cv::FONT_HERSHEY_SIMPLEX, scale, thick / 2 + 1, &baseline);
  // Above the box, or inside its top when there is no room above.
  const int top = face.box.y - size.height - baseline - 4 >= 0 ? face.box.y - size.height - baseline - 4 : face.box.y;
  const cv::Rect background =
      cv::Rect(face.box.x, top, size.width + 6, size.height + baseline + 4) & cv::Rect(0, 0, bgr.cols, bgr.rows);
  cv::rectangle(bgr, background, colour, cv::FILLED);
  cv::putText(bgr, label, {face.box.x + 3, top + size.height + 2}, cv::FONT_HERSHEY_SIMPLEX, scale, {0, 0, 0},
              thick / 2 + 1, cv::LINE_AA);
  return bgr;
}

}  // namespace taconite::app

#include "face_drawing.hpp"

#include <algorithm>
#include <opencv2/imgproc.hpp>

namespace taconite::gst {

Rgb state_colour(LabelState state) {
  switch (state) {
    case GST_TACONITE_LABEL_STATE_PENDING: return kPendingColour;
    case GST_TACONITE_LABEL_STATE_KNOWN: return kKnownColour;
    case GST_TACONITE_LABEL_STATE_UNKNOWN: return kUnknownColour;
    case GST_TACONITE_LABEL_STATE_NONE: break;
  }
  return kNoIdentityColour;
}

namespace {

void draw_box(OverlayCanvas& canvas, const FaceMark& m, int line, Rgb colour) {
  const std::int64_t w = std::min<std::int64_t>(line, m.width), h = std::min<std::int64_t>(line, m.height);
  canvas.fill({m.x, m.y, m.width, h}, colour);                 // top
  canvas.fill({m.x, m.y + m.height - h, m.width, h}, colour);  // bottom
  canvas.fill({m.x, m.y, w, m.height}, colour);                // left
  canvas.fill({m.x + m.width - w, m.y, w, m.height}, colour);  // right
}

void draw_label(OverlayCanvas& canvas, const FaceMark& m, const OverlayStyle& style, Rgb colour) {
  const std::string text = face_label_text(m, kMaxLabelChars);
  if (text.empty()) return;
  const int thickness = std::max(1, style.line_width / 2);
  int baseline = 0;
  const cv::Size size = cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, style.font_scale, thickness, &baseline);
  const int pad = thickness + 1;
  const std::int64_t band_w = size.width + 2 * pad, band_h = size.height + baseline + 2 * pad;
  // Above the box when it fits, else just inside its top; then moved inside the frame.
  std::int64_t top = m.y - band_h >= 0 ? m.y - band_h : m.y;
  std::int64_t left = m.x;
  top = std::clamp<std::int64_t>(top, 0, std::max<std::int64_t>(canvas.height() - band_h, 0));
  left = std::clamp<std::int64_t>(left, 0, std::max<std::int64_t>(canvas.width() - band_w, 0));
  canvas.fill({left, top, band_w, band_h}, kLabelBackground);
  canvas.text(text, static_cast<int>(left + pad), static_cast<int>(top + pad + size.height), style.font_scale,
              thickness, colour);
}

}  // namespace

void draw_face(OverlayCanvas& canvas, const FaceMark& mark, const OverlayStyle& style) {
  // A box with nothing in the frame draws nothing (no label pulled in from far away).
  if (mark.x >= canvas.width() || mark.y >= canvas.height() || mark.width <= 0 || mark.height <= 0) return;
  const Rgb colour = state_colour(mark.state);
  draw_box(canvas, mark, style.line_width, colour);
  if (style.landmarks)
    for (const Point2& p : mark.landmarks) canvas.dot(p.x, p.y, style.line_width + 1, colour);
  if (style.labels) draw_label(canvas, mark, style, colour);
}

}  // namespace taconite::gst

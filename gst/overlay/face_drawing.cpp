#include "face_drawing.hpp"

#include <algorithm>
#include <cmath>
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

OverlayStyle style_for_frame(const OverlayStyle& style, int frame_height) {
  const double scale = std::clamp(static_cast<double>(frame_height) / kStyleReferenceHeight, 1.0, kMaxStyleScale);
  OverlayStyle scaled = style;
  scaled.line_width = static_cast<int>(std::lround(style.line_width * scale));
  scaled.font_scale = style.font_scale * scale;
  return scaled;
}

namespace {

void draw_box(OverlayCanvas& canvas, const FaceMark& m, int line, Rgb colour) {
  const std::int64_t w = std::min<std::int64_t>(line, m.width), h = std::min<std::int64_t>(line, m.height);
  canvas.fill({m.x, m.y, m.width, h}, colour);                 // top
  canvas.fill({m.x, m.y + m.height - h, m.width, h}, colour);  // bottom
  canvas.fill({m.x, m.y, w, m.height}, colour);                // left
  canvas.fill({m.x + m.width - w, m.y, w, m.height}, colour);  // right
}

void draw_label(OverlayCanvas& canvas, const FaceMark& m, const OverlayStyle& style, Rgb colour,
                LabelLayout& labels) {
  const std::string text = face_label_text(m, kMaxLabelChars);
  if (text.empty()) return;
  const int thickness = std::max(1, style.line_width / 2);
  int baseline = 0;
  const cv::Size size = cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, style.font_scale, thickness, &baseline);
  const int pad = thickness + 1;
  const PixelRect band =
      labels.place({m.x, m.y, m.width, m.height}, size.width + 2 * pad, size.height + baseline + 2 * pad);
  canvas.fill(band, kLabelBackground);
  canvas.text(text, static_cast<int>(band.x + pad), static_cast<int>(band.y + pad + size.height), style.font_scale,
              thickness, colour);
}

}  // namespace

void draw_face(OverlayCanvas& canvas, const FaceMark& mark, const OverlayStyle& style, LabelLayout& labels) {
  // A box with nothing in the frame draws nothing (no label pulled in from far away).
  if (mark.x >= canvas.width() || mark.y >= canvas.height() || mark.width <= 0 || mark.height <= 0) return;
  const Rgb colour = state_colour(mark.state);
  draw_box(canvas, mark, style.line_width, colour);
  if (style.landmarks)
    for (const Point2& p : mark.landmarks) canvas.dot(p.x, p.y, style.line_width + 1, colour);
  if (style.labels) draw_label(canvas, mark, style, colour, labels);
}

}  // namespace taconite::gst

#include "face_marks.hpp"


namespace taconite::gst {

FaceMark read_face_mark(const GstVideoRegionOfInterestMeta* roi) {
  FaceMark mark;
  mark.x = roi->x;
  mark.y = roi->y;
  mark.width = roi->w;
  mark.height = roi->h;
  mark.landmarks = roi_landmarks(roi);
  if (gint64 id = 0; gst_taconite_roi_get_track_id(roi, &id)) mark.track_id = id;
  mark.state = gst_taconite_roi_get_label_state(roi);
  if (const gchar* label = gst_taconite_roi_get_label(roi)) mark.label = label;
  gdouble confidence = 0.0;
  if (gst_taconite_roi_get_confidence(roi, &confidence)) mark.confidence = confidence;
  return mark;
}

std::string face_label_text(const FaceMark& mark, std::size_t max_chars) {
  std::string text;
  auto add = [&](const std::string& part) {
    if (part.empty()) return;
    if (!text.empty()) text += ' ';
    text += part;
  };
  if (mark.track_id) {
    // (appended, not "#" + to_string(...): GCC 12's -O3 warns falsely about that insert, -Wrestrict)
    std::string track = "#";
    track += std::to_string(*mark.track_id);
    add(track);
  }
  add(mark.state == GST_TACONITE_LABEL_STATE_PENDING && mark.label.empty() ? std::string("pending") : mark.label);
  if (mark.confidence) {
    char number[32];
    g_snprintf(number, sizeof number, "%.2f", *mark.confidence);
    add(number);
  }
  for (char& c : text)
    if (c < 0x20 || c > 0x7e) c = '?';
  if (text.size() > max_chars) text.resize(max_chars);
  return text;
}

}  // namespace taconite::gst

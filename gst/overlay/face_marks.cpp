#include "face_marks.hpp"

#include <cstring>

#include "roi_track_param.hpp"

namespace taconite::gst {

namespace {

constexpr const char* kIdentityParam = "identity";

LabelState state_from_name(const char* name) {
  if (std::strcmp(name, "pending") == 0) return LabelState::Pending;
  if (std::strcmp(name, "known") == 0) return LabelState::Known;
  if (std::strcmp(name, "unknown") == 0) return LabelState::Unknown;
  return LabelState::None;
}

void read_identity(const GstStructure* identity, FaceMark& mark) {
  if (const gchar* label = gst_structure_get_string(identity, "label")) mark.label = label;
  gdouble confidence = 0.0;
  if (gst_structure_get_double(identity, "confidence", &confidence)) mark.confidence = confidence;
  if (const gchar* state = gst_structure_get_string(identity, "label_state")) {
    mark.state = state_from_name(state);
    return;
  }
  gint label_id = 0;
  const bool negative_id = gst_structure_get_int(identity, "label_id", &label_id) && label_id < 0;
  if (mark.label.empty())
    mark.state = LabelState::Pending;
  else
    mark.state = mark.label == "unknown" || negative_id ? LabelState::Unknown : LabelState::Known;
}

}  // namespace

FaceMark read_face_mark(const GstVideoRegionOfInterestMeta* roi) {
  FaceMark mark;
  mark.x = roi->x;
  mark.y = roi->y;
  mark.width = roi->w;
  mark.height = roi->h;
  mark.landmarks = roi_landmarks(roi);
  mark.track_id = roi_track_id(roi, kObjectIdParam);
  auto* meta = const_cast<GstVideoRegionOfInterestMeta*>(roi);  // the getter takes no const
  if (const GstStructure* identity = gst_video_region_of_interest_meta_get_param(meta, kIdentityParam))
    read_identity(identity, mark);
  return mark;
}

std::string face_label_text(const FaceMark& mark, std::size_t max_chars) {
  std::string text;
  auto add = [&](const std::string& part) {
    if (part.empty()) return;
    if (!text.empty()) text += ' ';
    text += part;
  };
  if (mark.track_id) add("#" + std::to_string(*mark.track_id));
  add(mark.state == LabelState::Pending && mark.label.empty() ? std::string("pending") : mark.label);
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

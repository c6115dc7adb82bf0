#include "roi_params.hpp"

#include <cmath>
#include <set>

#include "face_selection.hpp"

namespace taconite::gst {

namespace {

GValue double_array(std::span<const vision::Point2> points, bool x) {
  GValue array = G_VALUE_INIT;
  gst_value_array_init(&array, static_cast<guint>(points.size()));
  for (const vision::Point2& p : points) {
    GValue v = G_VALUE_INIT;
    g_value_init(&v, G_TYPE_DOUBLE);
    g_value_set_double(&v, x ? p.x : p.y);
    gst_value_array_append_and_take_value(&array, &v);
  }
  return array;
}

}  // namespace

GstStructure* points_structure(const char* name, std::span<const vision::Point2> points) {
  GstStructure* s = gst_structure_new_empty(name);
  GValue xs = double_array(points, true), ys = double_array(points, false);
  gst_structure_take_value(s, "x", &xs);
  gst_structure_take_value(s, "y", &ys);
  return s;
}

void replace_roi_param(GstVideoRegionOfInterestMeta* roi, GstStructure* s) {
  for (GList* l = roi->params; l;) {
    GList* next = l->next;
    if (gst_structure_has_name(static_cast<GstStructure*>(l->data), gst_structure_get_name(s))) {
      gst_structure_free(static_cast<GstStructure*>(l->data));
      roi->params = g_list_delete_link(roi->params, l);
    }
    l = next;
  }
  gst_video_region_of_interest_meta_add_param(roi, s);
}

GstStructure* add_detection_param(GstVideoRegionOfInterestMeta* roi, double confidence) {
  GstStructure* s =
      gst_structure_new("detection", "confidence", G_TYPE_DOUBLE, confidence, "label", G_TYPE_STRING, "face", nullptr);
  gst_video_region_of_interest_meta_add_param(roi, s);
  return s;
}

bool roi_predicted(const GstVideoRegionOfInterestMeta* roi) {
  const GstStructure* s =
      gst_video_region_of_interest_meta_get_param(const_cast<GstVideoRegionOfInterestMeta*>(roi), "detection");
  gboolean predicted = FALSE, fresh = TRUE;
  if (!s) return false;
  return (gst_structure_get_boolean(s, "predicted", &predicted) && predicted) ||
         (gst_structure_get_boolean(s, "fresh", &fresh) && !fresh);
}

std::optional<double> roi_quality(const GstVideoRegionOfInterestMeta* roi) {
  const GstStructure* s =
      gst_video_region_of_interest_meta_get_param(const_cast<GstVideoRegionOfInterestMeta*>(roi), "quality");
  gdouble value = 0.0;
  if (s && (gst_structure_get_double(s, "embedding-score", &value) || gst_structure_get_double(s, "score", &value)) &&
      std::isfinite(value))
    return value;
  return std::nullopt;
}

std::vector<gint> unused_roi_ids(GstBuffer* buffer, std::size_t count) {
  std::set<gint> used;
  for (const GstVideoRegionOfInterestMeta* roi : buffer_rois(buffer))
    if (roi->id > 0) used.insert(roi->id);
  std::vector<gint> ids;
  auto next_used = used.begin();
  for (gint candidate = 1; ids.size() < count; ++candidate) {  // at most used.size() + count steps
    while (next_used != used.end() && *next_used < candidate) ++next_used;
    if (next_used == used.end() || *next_used != candidate) ids.push_back(candidate);
  }
  return ids;
}

}  // namespace taconite::gst

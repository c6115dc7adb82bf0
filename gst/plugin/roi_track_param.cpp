#include "roi_track_param.hpp"

namespace taconite::gst {

namespace {

GstStructure* find_param(const GstVideoRegionOfInterestMeta* roi) {
  for (GList* l = roi->params; l; l = l->next)
    if (gst_structure_has_name(static_cast<GstStructure*>(l->data), kObjectIdParam))
      return static_cast<GstStructure*>(l->data);
  return nullptr;
}

void set_id_field(GstStructure* s, gint64 id) {
  if (id >= G_MININT && id <= G_MAXINT)
    gst_structure_set(s, "id", G_TYPE_INT, static_cast<gint>(id), nullptr);
  else
    gst_structure_set(s, "id", G_TYPE_INT64, id, nullptr);
}

}  // namespace

bool has_roi_track_id_param(const GstVideoRegionOfInterestMeta* roi) { return find_param(roi) != nullptr; }

bool set_roi_track_id(GstVideoRegionOfInterestMeta* roi, std::optional<gint64> id) {
  if (id) {
    if (GstStructure* s = find_param(roi)) {
      set_id_field(s, *id);
    } else {
      GstStructure* param = gst_structure_new_empty(kObjectIdParam);
      set_id_field(param, *id);
      gst_video_region_of_interest_meta_add_param(roi, param);
    }
    return true;
  }
  bool removed = false;
  while (GstStructure* s = find_param(roi)) {
    roi->params = g_list_remove(roi->params, s);
    gst_structure_free(s);
    removed = true;
  }
  return removed;
}

}  // namespace taconite::gst

#include "roi_track_param.hpp"

#include <unordered_map>

namespace taconite::gst {

namespace {

std::optional<gint64> integer(const GValue* v) {
  if (!v) return std::nullopt;
  if (G_VALUE_HOLDS_INT(v)) return g_value_get_int(v);
  if (G_VALUE_HOLDS_UINT(v)) return g_value_get_uint(v);
  if (G_VALUE_HOLDS_INT64(v)) return g_value_get_int64(v);
  if (G_VALUE_HOLDS_UINT64(v)) return static_cast<gint64>(g_value_get_uint64(v));
  return std::nullopt;
}

GstStructure* find_param(const GstVideoRegionOfInterestMeta* roi) {
  for (GList* l = roi->params; l; l = l->next)
    if (gst_structure_has_name(static_cast<GstStructure*>(l->data), kObjectIdParam))
      return static_cast<GstStructure*>(l->data);
  return nullptr;
}

void set_id_fields(GstStructure* s, gint64 id, const std::string& uid) {
  if (id >= G_MININT && id <= G_MAXINT)
    gst_structure_set(s, "id", G_TYPE_INT, static_cast<gint>(id), nullptr);
  else
    gst_structure_set(s, "id", G_TYPE_INT64, id, nullptr);
  if (!uid.empty())
    gst_structure_set(s, "uid", G_TYPE_STRING, uid.c_str(), nullptr);
  else
    gst_structure_remove_field(s, "uid");  // another tracker's uid would name another track
}

}  // namespace

bool has_roi_track_id_param(const GstVideoRegionOfInterestMeta* roi) { return find_param(roi) != nullptr; }

bool set_roi_track_id(GstVideoRegionOfInterestMeta* roi, std::optional<gint64> id, const std::string& uid) {
  if (id) {
    if (GstStructure* s = find_param(roi)) {
      set_id_fields(s, *id, uid);
    } else {
      GstStructure* param = gst_structure_new_empty(kObjectIdParam);
      set_id_fields(param, *id, uid);
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

std::optional<gint64> roi_track_id(const GstVideoRegionOfInterestMeta* roi, const std::string& id_param) {
  if (!roi || id_param.empty()) return std::nullopt;
  for (GList* l = roi->params; l; l = l->next) {
    const auto* s = static_cast<const GstStructure*>(l->data);
    if (gst_structure_has_name(s, id_param.c_str()))
      if (auto id = integer(gst_structure_get_value(s, "id"))) return id;
    if (auto id = integer(gst_structure_get_value(s, id_param.c_str()))) return id;
  }
  return std::nullopt;
}

std::vector<std::optional<gint64>> frame_track_ids(const std::vector<FaceJob>& faces, const std::string& id_param) {
  std::vector<std::optional<gint64>> ids(faces.size());
  std::unordered_map<gint64, int> holders;
  for (std::size_t i = 0; i < faces.size(); ++i)
    if (!faces[i].whole_buffer && (ids[i] = roi_track_id(faces[i].roi, id_param))) ++holders[*ids[i]];
  for (std::optional<gint64>& id : ids)
    if (id && holders[*id] > 1) id.reset();
  return ids;
}

}  // namespace taconite::gst

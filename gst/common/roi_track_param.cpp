#include "roi_track_param.hpp"

#include <gst/taconite/gsttaconiteface.h>

#include <unordered_map>

namespace taconite::gst {

bool has_roi_track_id_param(const GstVideoRegionOfInterestMeta* roi) {
  return gst_taconite_roi_has_param(roi, kObjectIdParam);
}

bool set_roi_track_id(GstVideoRegionOfInterestMeta* roi, std::optional<gint64> id, const std::string& uid) {
  // Replaced whole: an empty uid leaves none, as another tracker's uid would name another track.
  if (id) return gst_taconite_roi_set_track_id(roi, *id, uid.empty() ? nullptr : uid.c_str());
  return gst_taconite_roi_remove_param(roi, kObjectIdParam);
}

std::optional<gint64> roi_track_id(const GstVideoRegionOfInterestMeta* roi, const std::string& id_param) {
  gint64 id = 0;
  if (gst_taconite_roi_get_track_id_from(roi, id_param.c_str(), &id)) return id;
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

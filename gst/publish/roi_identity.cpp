#include "roi_identity.hpp"

namespace taconite::gst {

std::optional<RoiIdentity> roi_identity(const GstVideoRegionOfInterestMeta* roi) {
  const GstStructure* s =
      gst_video_region_of_interest_meta_get_param(const_cast<GstVideoRegionOfInterestMeta*>(roi), "identity");
  if (!s) return std::nullopt;
  RoiIdentity identity;
  if (const gchar* state = gst_structure_get_string(s, "label_state")) identity.label_state = state;
  if (const gchar* label = gst_structure_get_string(s, "label")) identity.label = label;
  gint id = 0;
  guint uid = 0;
  gint64 id64 = 0;
  if (gst_structure_get_int(s, "label_id", &id))
    identity.label_id = id;
  else if (gst_structure_get_uint(s, "label_id", &uid))
    identity.label_id = uid;
  else if (gst_structure_get_int64(s, "label_id", &id64))
    identity.label_id = id64;
  gdouble confidence = 0.0;
  if (gst_structure_get_double(s, "confidence", &confidence)) identity.confidence = confidence;
  return identity;
}

}  // namespace taconite::gst

#include "roi_identity.hpp"

#include <gst/taconite/gsttaconiteroi.h>

namespace taconite::gst {

std::optional<RoiIdentity> roi_identity(const GstVideoRegionOfInterestMeta* roi) {
  const GstTaconiteLabelState state = gst_taconite_roi_get_label_state(roi);
  if (state == GST_TACONITE_LABEL_STATE_NONE) return std::nullopt;
  RoiIdentity identity;
  identity.label_state = gst_taconite_label_state_to_string(state);
  if (const gchar* label = gst_taconite_roi_get_label(roi)) identity.label = label;
  gint id = 0;
  if (gst_taconite_roi_get_label_id(roi, &id)) identity.label_id = id;
  gdouble confidence = 0.0;
  if (gst_taconite_roi_get_confidence(roi, &confidence)) identity.confidence = confidence;
  return identity;
}

}  // namespace taconite::gst

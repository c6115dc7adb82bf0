// taconitetrack: gives the ROIs of a stream stable tracking ids (ROI param "object_id", field "id").
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_TACONITE_TRACK (gst_taconite_track_get_type())
G_DECLARE_FINAL_TYPE(GstTaconiteTrack, gst_taconite_track, GST, TACONITE_TRACK, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE(taconitetrack);

G_END_DECLS

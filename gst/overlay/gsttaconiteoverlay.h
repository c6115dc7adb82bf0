// taconiteoverlay: draws the face ROIs (box, landmarks, track id, name, confidence) on the video.
#pragma once

#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

#define GST_TYPE_TACONITE_OVERLAY (gst_taconite_overlay_get_type())
G_DECLARE_FINAL_TYPE(GstTaconiteOverlay, gst_taconite_overlay, GST, TACONITE_OVERLAY, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE(taconiteoverlay);

G_END_DECLS

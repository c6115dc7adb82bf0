// taconiteidentify: names the faces of a stream from a gallery (ROI params label/label_id/confidence).
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_TACONITE_IDENTIFY (gst_taconite_identify_get_type())
G_DECLARE_FINAL_TYPE(GstTaconiteIdentify, gst_taconite_identify, GST, TACONITE_IDENTIFY, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE(taconiteidentify);

G_END_DECLS

// taconitedetect: YuNet DNN face detection (OpenCV DNN) with the 5 alignment landmarks.
#pragma once

#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

#define GST_TYPE_TACONITE_DETECT (gst_taconite_detect_get_type())
G_DECLARE_FINAL_TYPE(GstTaconiteDetect, gst_taconite_detect, GST, TACONITE_DETECT, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE(taconitedetect);

G_END_DECLS

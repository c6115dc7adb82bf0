// taconitelandmarks: dlib 68-point landmarks (and optional HOG face detection) for face ROIs.
#pragma once

#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

#define GST_TYPE_TACONITE_LANDMARKS (gst_taconite_landmarks_get_type())
G_DECLARE_FINAL_TYPE(GstTaconiteLandmarks, gst_taconite_landmarks, GST, TACONITE_LANDMARKS, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE(taconitelandmarks);

G_END_DECLS

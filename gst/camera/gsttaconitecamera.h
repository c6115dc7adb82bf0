// taconitecamera: a supervised camera source (RTSP, HTTP, V4L2, files) decoding to raw video.
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_TACONITE_CAMERA (gst_taconite_camera_get_type())
G_DECLARE_FINAL_TYPE(GstTaconiteCamera, gst_taconite_camera, GST, TACONITE_CAMERA, GstElement)

GST_ELEMENT_REGISTER_DECLARE(taconitecamera);

G_END_DECLS

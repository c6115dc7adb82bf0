// taconiteadaface: face crops / face ROIs in, AdaFace embeddings attached as metadata out.
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_TACONITE_ADAFACE (gst_taconite_adaface_get_type())
G_DECLARE_FINAL_TYPE(GstTaconiteAdaface, gst_taconite_adaface, GST, TACONITE_ADAFACE, GstElement)

GST_ELEMENT_REGISTER_DECLARE(taconiteadaface);

G_END_DECLS

// taconitepublish: one JSON document per frame with faces, to a JSON-lines file or an MQTT broker.
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_TACONITE_PUBLISH (gst_taconite_publish_get_type())
G_DECLARE_FINAL_TYPE(GstTaconitePublish, gst_taconite_publish, GST, TACONITE_PUBLISH, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE(taconitepublish);

// method=bus: the name of the element message carrying each document; its fields are `kind`
// ("faces" or "tracks"), `stream` and `document` (the JSON text exactly as method=file writes it).
#define GST_TACONITE_PUBLISH_MESSAGE_NAME "taconite-publish"

G_END_DECLS

/* The "taconite-camera-lost" event (gst/taconite/gsttaconitecamera.h). */
#include "gst/taconite/gsttaconitecamera.h"

GstEvent *gst_taconite_camera_lost_event_new(const gchar *stream, const gchar *reason) {
  if (!stream || !g_utf8_validate(stream, -1, NULL)) return NULL;
  if (reason && !g_utf8_validate(reason, -1, NULL)) return NULL;
  GstStructure *s = gst_structure_new(GST_TACONITE_CAMERA_LOST_EVENT_NAME, "stream", G_TYPE_STRING, stream, "reason",
                                      G_TYPE_STRING, reason ? reason : "error", NULL);
  return gst_event_new_custom(GST_EVENT_CUSTOM_DOWNSTREAM, s);
}

/* The event's structure when it is a well-formed camera-lost event: both fields strings. */
static const GstStructure *camera_lost_structure(GstEvent *event) {
  if (!event || !GST_IS_EVENT(event) || GST_EVENT_TYPE(event) != GST_EVENT_CUSTOM_DOWNSTREAM) return NULL;
  const GstStructure *s = gst_event_get_structure(event);
  if (!s || !gst_structure_has_name(s, GST_TACONITE_CAMERA_LOST_EVENT_NAME)) return NULL;
  if (!gst_structure_get_string(s, "stream") || !gst_structure_get_string(s, "reason")) return NULL;
  return s;
}

gboolean gst_taconite_event_is_camera_lost(GstEvent *event) { return camera_lost_structure(event) != NULL; }

const gchar *gst_taconite_camera_lost_event_get_stream(GstEvent *event) {
  const GstStructure *s = camera_lost_structure(event);
  return s ? gst_structure_get_string(s, "stream") : NULL;
}

const gchar *gst_taconite_camera_lost_event_get_reason(GstEvent *event) {
  const GstStructure *s = camera_lost_structure(event);
  return s ? gst_structure_get_string(s, "reason") : NULL;
}

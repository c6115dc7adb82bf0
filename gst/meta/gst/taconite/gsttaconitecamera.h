/* gsttaconitecamera: what taconitecamera says when its camera goes away.
 *
 * Downstream, in stream order: when the camera is lost (an error, a stall or the end of a live
 * stream) taconitecamera sends one serialized custom downstream event "taconite-camera-lost" with
 * the string fields "stream" (the camera's name) and "reason" ("error", "stall" or "eos"), after the
 * last frame before the outage and before the first frame after it. taconitetrack ends every open
 * track on it (tracks-ended, reason "camera-lost", gsttaconitetracks.h) and starts new tracks when
 * frames come back; the event then travels on, so any element may act on it.
 *
 * On the bus: element messages named "taconite-camera" (GST_TACONITE_CAMERA_MESSAGE_NAME) with
 * "stream" (string) and "state": "lost" or "back" with "restarts" (guint64), "reason" and "message"
 * (lost: the reason as above and the error's text) or "outage" (back: seconds without frames,
 * double); "overloaded" or "keeping-up" (drop=latest: the analysis is slower than the camera, or
 * no longer) with "decoded-fps" and "analysed-fps" (doubles, over the last 5 s) and, keeping-up,
 * "lasted" (seconds, double) and "dropped" (frames, guint64).
 *
 * Link with pkg-config `gsttaconitemeta-1.0`; from Python use GstTaconite 1.0. A NULL, foreign or
 * malformed event gives FALSE / NULL, never a crash.
 */
#pragma once

#include <gst/gst.h>
#include <gst/taconite/gsttaconitemeta.h>

G_BEGIN_DECLS

#define GST_TACONITE_CAMERA_LOST_EVENT_NAME "taconite-camera-lost"
#define GST_TACONITE_CAMERA_MESSAGE_NAME "taconite-camera"

/**
 * gst_taconite_camera_lost_event_new:
 * @stream: the camera's name (valid UTF-8)
 * @reason: (nullable): why it was lost: "error", "stall" or "eos"; NULL: "error"
 *
 * Returns: (transfer full) (nullable): a new serialized custom downstream event, or NULL when
 * @stream is NULL or a string is not valid UTF-8.
 */
GST_TACONITE_META_API GstEvent *gst_taconite_camera_lost_event_new(const gchar *stream, const gchar *reason);

/**
 * gst_taconite_event_is_camera_lost:
 * @event: (nullable): a #GstEvent
 *
 * Returns: TRUE when @event is a well-formed "taconite-camera-lost" event.
 */
GST_TACONITE_META_API gboolean gst_taconite_event_is_camera_lost(GstEvent *event);

/**
 * gst_taconite_camera_lost_event_get_stream:
 * @event: (nullable): a #GstEvent
 *
 * Returns: (transfer none) (nullable): the lost camera's name, NULL when not a camera-lost event.
 */
GST_TACONITE_META_API const gchar *gst_taconite_camera_lost_event_get_stream(GstEvent *event);

/**
 * gst_taconite_camera_lost_event_get_reason:
 * @event: (nullable): a #GstEvent
 *
 * Returns: (transfer none) (nullable): why the camera was lost, NULL when not a camera-lost event.
 */
GST_TACONITE_META_API const gchar *gst_taconite_camera_lost_event_get_reason(GstEvent *event);

G_END_DECLS

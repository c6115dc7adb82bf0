/* The "taconite-tracks-ended" event (gst/taconite/gsttaconitetracks.h). */
#include "gst/taconite/gsttaconitetracks.h"

GstEvent *gst_taconite_tracks_ended_event_new(const gint64 *ids, const gchar *const *uids, guint n_tracks,
                                              const gchar *reason) {
  if (!ids || n_tracks == 0 || n_tracks > GST_TACONITE_TRACKS_ENDED_MAX) return NULL;
  if (reason && !g_utf8_validate(reason, -1, NULL)) return NULL;
  GValue id_array = G_VALUE_INIT, uid_array = G_VALUE_INIT;
  gst_value_array_init(&id_array, n_tracks);
  gst_value_array_init(&uid_array, n_tracks);
  for (guint i = 0; i < n_tracks; i++) {
    const gchar *uid = uids && uids[i] ? uids[i] : "";
    if (!g_utf8_validate(uid, -1, NULL)) {
      g_value_unset(&id_array);
      g_value_unset(&uid_array);
      return NULL;
    }
    GValue id = G_VALUE_INIT, text = G_VALUE_INIT;
    g_value_init(&id, G_TYPE_INT64);
    g_value_set_int64(&id, ids[i]);
    gst_value_array_append_and_take_value(&id_array, &id);
    g_value_init(&text, G_TYPE_STRING);
    g_value_set_string(&text, uid);
    gst_value_array_append_and_take_value(&uid_array, &text);
  }
  GstStructure *s = gst_structure_new(GST_TACONITE_TRACKS_ENDED_EVENT_NAME, "reason", G_TYPE_STRING,
                                      reason ? reason : "lost", NULL);
  gst_structure_take_value(s, "ids", &id_array);
  gst_structure_take_value(s, "uids", &uid_array);
  return gst_event_new_custom(GST_EVENT_CUSTOM_DOWNSTREAM, s);
}

/* The event's structure when it is a well-formed tracks-ended event: both arrays of one size within
 * the bound, ids gint64 and uids strings. */
static const GstStructure *tracks_ended_structure(GstEvent *event) {
  if (!event || !GST_IS_EVENT(event) || GST_EVENT_TYPE(event) != GST_EVENT_CUSTOM_DOWNSTREAM) return NULL;
  const GstStructure *s = gst_event_get_structure(event);
  if (!s || !gst_structure_has_name(s, GST_TACONITE_TRACKS_ENDED_EVENT_NAME)) return NULL;
  const GValue *ids = gst_structure_get_value(s, "ids");
  const GValue *uids = gst_structure_get_value(s, "uids");
  if (!ids || !uids || !GST_VALUE_HOLDS_ARRAY(ids) || !GST_VALUE_HOLDS_ARRAY(uids)) return NULL;
  guint n = gst_value_array_get_size(ids);
  if (n == 0 || n > GST_TACONITE_TRACKS_ENDED_MAX || gst_value_array_get_size(uids) != n) return NULL;
  for (guint i = 0; i < n; i++) {
    if (!G_VALUE_HOLDS_INT64(gst_value_array_get_value(ids, i))) return NULL;
    if (!G_VALUE_HOLDS_STRING(gst_value_array_get_value(uids, i))) return NULL;
  }
  return s;
}

gboolean gst_taconite_event_is_tracks_ended(GstEvent *event) { return tracks_ended_structure(event) != NULL; }

guint gst_taconite_tracks_ended_event_get_size(GstEvent *event) {
  const GstStructure *s = tracks_ended_structure(event);
  return s ? gst_value_array_get_size(gst_structure_get_value(s, "ids")) : 0;
}

gboolean gst_taconite_tracks_ended_event_get_track(GstEvent *event, guint index, gint64 *track_id, const gchar **uid) {
  const GstStructure *s = tracks_ended_structure(event);
  if (!s || index >= gst_value_array_get_size(gst_structure_get_value(s, "ids"))) return FALSE;
  if (track_id) *track_id = g_value_get_int64(gst_value_array_get_value(gst_structure_get_value(s, "ids"), index));
  if (uid) {
    const gchar *text = g_value_get_string(gst_value_array_get_value(gst_structure_get_value(s, "uids"), index));
    *uid = text ? text : "";
  }
  return TRUE;
}

const gchar *gst_taconite_tracks_ended_event_get_reason(GstEvent *event) {
  const GstStructure *s = tracks_ended_structure(event);
  return s ? gst_structure_get_string(s, "reason") : NULL;
}

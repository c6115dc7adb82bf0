/* Typed writes of the face contract (gst/taconite/gsttaconiteface.h). */
#include "gst/taconite/gsttaconiteface.h"

#include <math.h>
#include <string.h>

#include "roi_values.h"

#define DETECTION_PARAM "detection"

static const gchar *const quality_fields[] = {"score", "size", "pose", "sharpness",
                                              "yaw", "pitch", "roll", "embedding-score"};
#define N_QUALITY_FIELDS G_N_ELEMENTS(quality_fields)

gboolean gst_taconite_roi_remove_param(GstVideoRegionOfInterestMeta *roi, const gchar *name) {
  gboolean removed = FALSE;
  if (!roi || !name) return FALSE;
  for (GList *l = roi->params; l;) {
    GList *next = l->next;
    if (GST_IS_STRUCTURE(l->data) && gst_structure_has_name(l->data, name)) {
      gst_structure_free(l->data);
      roi->params = g_list_delete_link(roi->params, l);
      removed = TRUE;
    }
    l = next;
  }
  return removed;
}

gboolean gst_taconite_roi_replace_param(GstVideoRegionOfInterestMeta *roi, GstStructure *param) {
  g_return_val_if_fail(GST_IS_STRUCTURE(param), FALSE);
  if (!roi) {
    gst_structure_free(param);
    return FALSE;
  }
  gst_taconite_roi_remove_param(roi, gst_structure_get_name(param));
  gst_video_region_of_interest_meta_add_param(roi, param);
  return TRUE;
}

static gboolean all_finite(const gdouble *values, guint n) {
  for (guint i = 0; i < n; i++)
    if (!isfinite(values[i])) return FALSE;
  return TRUE;
}

static void take_double_array(GstStructure *s, const gchar *field, const gdouble *values, guint n) {
  GValue array = G_VALUE_INIT;
  gst_value_array_init(&array, n);
  for (guint i = 0; i < n; i++) {
    GValue v = G_VALUE_INIT;
    g_value_init(&v, G_TYPE_DOUBLE);
    g_value_set_double(&v, values[i]);
    gst_value_array_append_and_take_value(&array, &v);
  }
  gst_structure_take_value(s, field, &array);
}

/* GstStructure's rule for names (a letter, then letters, digits and "/-_.:+"), checked here because
 * gst_structure_new_empty() answers a bad name with a critical warning. */
static gboolean valid_structure_name(const gchar *name) {
  if (!name || !g_ascii_isalpha(*name)) return FALSE;
  for (const gchar *c = name + 1; *c; c++)
    if (!g_ascii_isalnum(*c) && !strchr("/-_.:+", *c)) return FALSE;
  return TRUE;
}

GstStructure *gst_taconite_points_params_new(const gchar *name, const gdouble *x, const gdouble *y, guint n_points) {
  if (!valid_structure_name(name) || !x || !y || n_points == 0 || n_points > TACONITE_MAX_POINTS ||
      !all_finite(x, n_points) || !all_finite(y, n_points))
    return NULL;
  GstStructure *s = gst_structure_new_empty(name);
  take_double_array(s, "x", x, n_points);
  take_double_array(s, "y", y, n_points);
  return s;
}

gboolean gst_taconite_roi_set_landmarks(GstVideoRegionOfInterestMeta *roi, const gdouble *x, const gdouble *y,
                                        guint n_points) {
  GstStructure *s = roi ? gst_taconite_points_params_new("landmarks", x, y, n_points) : NULL;
  return s && gst_taconite_roi_replace_param(roi, s);
}

gboolean gst_taconite_roi_set_detection(GstVideoRegionOfInterestMeta *roi, gdouble confidence) {
  if (!roi || !isfinite(confidence)) return FALSE;
  return gst_taconite_roi_replace_param(roi, gst_structure_new(DETECTION_PARAM, "confidence", G_TYPE_DOUBLE,
                                                               confidence, "label", G_TYPE_STRING, "face", NULL));
}

static gboolean set_detection_flag(GstVideoRegionOfInterestMeta *roi, const gchar *field, gboolean value) {
  GstStructure *s = taconite_roi_find_param(roi, DETECTION_PARAM);
  if (!s) return FALSE;
  gst_structure_set(s, field, G_TYPE_BOOLEAN, value ? TRUE : FALSE, NULL);
  return TRUE;
}

gboolean gst_taconite_roi_set_fresh(GstVideoRegionOfInterestMeta *roi, gboolean fresh) {
  return set_detection_flag(roi, "fresh", fresh);
}

gboolean gst_taconite_roi_set_predicted(GstVideoRegionOfInterestMeta *roi, gboolean predicted) {
  return set_detection_flag(roi, "predicted", predicted);
}

gboolean gst_taconite_roi_set_track_id(GstVideoRegionOfInterestMeta *roi, gint64 track_id, const gchar *uid) {
  if (!roi || (uid && (!*uid || !g_utf8_validate(uid, -1, NULL)))) return FALSE;
  GstStructure *s = gst_structure_new_empty("object_id");
  if (track_id >= G_MININT && track_id <= G_MAXINT)
    gst_structure_set(s, "id", G_TYPE_INT, (gint)track_id, NULL);
  else
    gst_structure_set(s, "id", G_TYPE_INT64, track_id, NULL);
  if (uid) gst_structure_set(s, "uid", G_TYPE_STRING, uid, NULL);
  return gst_taconite_roi_replace_param(roi, s);
}

static gboolean is_quality_field(const gchar *field) {
  for (gsize i = 0; i < N_QUALITY_FIELDS; i++)
    if (field && strcmp(field, quality_fields[i]) == 0) return TRUE;
  return FALSE;
}

gboolean gst_taconite_roi_set_quality(GstVideoRegionOfInterestMeta *roi, const gchar *const *fields,
                                      const gdouble *values, guint n_fields) {
  if (!roi || !fields || !values || n_fields == 0 || n_fields > N_QUALITY_FIELDS) return FALSE;
  GstStructure *s = gst_structure_new_empty("quality");
  for (guint i = 0; i < n_fields; i++) {
    if (!is_quality_field(fields[i]) || gst_structure_has_field(s, fields[i]) || !isfinite(values[i])) {
      gst_structure_free(s);
      return FALSE;
    }
    gst_structure_set(s, fields[i], G_TYPE_DOUBLE, values[i], NULL);
  }
  return gst_taconite_roi_replace_param(roi, s);
}

gboolean gst_taconite_roi_set_identity(GstVideoRegionOfInterestMeta *roi, const gchar *label, gint label_id,
                                       gdouble confidence) {
  if (!roi || !label || !g_utf8_validate(label, -1, NULL) || (label_id < 1 && label_id != -1) || !isfinite(confidence))
    return FALSE;
  return gst_taconite_roi_replace_param(
      roi, gst_structure_new("identity", "label_state", G_TYPE_STRING, label_id == -1 ? "unknown" : "known", "label",
                             G_TYPE_STRING, label, "label_id", G_TYPE_INT, label_id, "confidence", G_TYPE_DOUBLE,
                             confidence, NULL));
}

gboolean gst_taconite_roi_set_identity_pending(GstVideoRegionOfInterestMeta *roi) {
  if (!roi) return FALSE;
  return gst_taconite_roi_replace_param(roi,
                                        gst_structure_new("identity", "label_state", G_TYPE_STRING, "pending", NULL));
}

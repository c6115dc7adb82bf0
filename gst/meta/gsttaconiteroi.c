/* Typed reads of the taconite ROI params (gst/taconite/gsttaconiteroi.h). */
#include "gst/taconite/gsttaconiteroi.h"

#include <string.h>

#define IDENTITY_PARAM "identity"
#define TRACK_PARAM "object_id"
#define LANDMARKS_PARAM "landmarks"
#define MAX_LANDMARKS 1024 /* bounds what a foreign writer's array makes us allocate */

static const GEnumValue label_state_values[] = {
    {GST_TACONITE_LABEL_STATE_NONE, "GST_TACONITE_LABEL_STATE_NONE", "none"},
    {GST_TACONITE_LABEL_STATE_PENDING, "GST_TACONITE_LABEL_STATE_PENDING", "pending"},
    {GST_TACONITE_LABEL_STATE_KNOWN, "GST_TACONITE_LABEL_STATE_KNOWN", "known"},
    {GST_TACONITE_LABEL_STATE_UNKNOWN, "GST_TACONITE_LABEL_STATE_UNKNOWN", "unknown"},
    {0, NULL, NULL},
};

GType gst_taconite_label_state_get_type(void) {
  static GType type = 0;
  if (g_once_init_enter(&type)) {
    GType registered = g_enum_register_static("GstTaconiteLabelState", label_state_values);
    g_once_init_leave(&type, registered);
  }
  return type;
}

const gchar *gst_taconite_label_state_to_string(GstTaconiteLabelState state) {
  for (const GEnumValue *v = label_state_values; v->value_nick; v++)
    if (v->value == (gint)state) return v->value_nick;
  return "none";
}

static GstStructure *find_param(const GstVideoRegionOfInterestMeta *roi, const gchar *name) {
  if (!roi) return NULL;
  for (GList *l = roi->params; l; l = l->next)
    if (gst_structure_has_name(l->data, name)) return l->data;
  return NULL;
}

gboolean gst_taconite_roi_get_track_id(const GstVideoRegionOfInterestMeta *roi, gint64 *track_id) {
  const GstStructure *s = find_param(roi, TRACK_PARAM);
  gint small = 0;
  gint64 id = 0;
  if (!s) return FALSE;
  if (gst_structure_get_int(s, "id", &small))
    id = small;
  else if (!gst_structure_get_int64(s, "id", &id))
    return FALSE;
  if (track_id) *track_id = id;
  return TRUE;
}

const gchar *gst_taconite_roi_get_track_uid(const GstVideoRegionOfInterestMeta *roi) {
  const GstStructure *s = find_param(roi, TRACK_PARAM);
  const gchar *uid = s ? gst_structure_get_string(s, "uid") : NULL;
  return uid && *uid ? uid : NULL;
}

GstTaconiteLabelState gst_taconite_roi_get_label_state(const GstVideoRegionOfInterestMeta *roi) {
  const GstStructure *s = find_param(roi, IDENTITY_PARAM);
  if (!s) return GST_TACONITE_LABEL_STATE_NONE;
  const gchar *state = gst_structure_get_string(s, "label_state");
  if (state) {
    if (strcmp(state, "known") == 0) return GST_TACONITE_LABEL_STATE_KNOWN;
    if (strcmp(state, "unknown") == 0) return GST_TACONITE_LABEL_STATE_UNKNOWN;
    return GST_TACONITE_LABEL_STATE_PENDING; /* "pending", or a state newer than this library */
  }
  /* Written before label_state existed (or by another element): a label is a decision. */
  gint label_id = 0;
  if (gst_structure_get_int(s, "label_id", &label_id) && label_id == -1) return GST_TACONITE_LABEL_STATE_UNKNOWN;
  return gst_structure_get_string(s, "label") ? GST_TACONITE_LABEL_STATE_KNOWN : GST_TACONITE_LABEL_STATE_PENDING;
}

const gchar *gst_taconite_roi_get_label(const GstVideoRegionOfInterestMeta *roi) {
  const GstStructure *s = find_param(roi, IDENTITY_PARAM);
  return s ? gst_structure_get_string(s, "label") : NULL;
}

gboolean gst_taconite_roi_get_label_id(const GstVideoRegionOfInterestMeta *roi, gint *label_id) {
  const GstStructure *s = find_param(roi, IDENTITY_PARAM);
  gint id = 0;
  if (!s || !gst_structure_get_int(s, "label_id", &id)) return FALSE;
  if (label_id) *label_id = id;
  return TRUE;
}

gboolean gst_taconite_roi_get_confidence(const GstVideoRegionOfInterestMeta *roi, gdouble *confidence) {
  const GstStructure *s = find_param(roi, IDENTITY_PARAM);
  gdouble value = 0.0;
  if (!s || !gst_structure_get_double(s, "confidence", &value)) return FALSE;
  if (confidence) *confidence = value;
  return TRUE;
}

/* The numbers of an array or list field; FALSE when a value is not a number. */
static gboolean read_numbers(const GstStructure *s, const gchar *field, gdouble **out, guint *n) {
  const GValue *v = gst_structure_get_value(s, field);
  gboolean array = v && GST_VALUE_HOLDS_ARRAY(v);
  if (!v || !(array || GST_VALUE_HOLDS_LIST(v))) return FALSE;
  guint size = array ? gst_value_array_get_size(v) : gst_value_list_get_size(v);
  if (size == 0 || size > MAX_LANDMARKS) return FALSE;
  gdouble *values = g_new(gdouble, size);
  for (guint i = 0; i < size; i++) {
    const GValue *e = array ? gst_value_array_get_value(v, i) : gst_value_list_get_value(v, i);
    if (G_VALUE_HOLDS_DOUBLE(e))
      values[i] = g_value_get_double(e);
    else if (G_VALUE_HOLDS_FLOAT(e))
      values[i] = g_value_get_float(e);
    else if (G_VALUE_HOLDS_INT(e))
      values[i] = g_value_get_int(e);
    else {
      g_free(values);
      return FALSE;
    }
  }
  *out = values;
  *n = size;
  return TRUE;
}

gboolean gst_taconite_roi_get_landmarks(const GstVideoRegionOfInterestMeta *roi, gdouble **x, gdouble **y,
                                        guint *n_points) {
  g_return_val_if_fail(n_points != NULL, FALSE);
  *n_points = 0;
  if (x) *x = NULL;
  if (y) *y = NULL;
  const GstStructure *s = find_param(roi, LANDMARKS_PARAM);
  gdouble *xs = NULL, *ys = NULL;
  guint nx = 0, ny = 0;
  if (!s || !read_numbers(s, "x", &xs, &nx)) return FALSE;
  if (!read_numbers(s, "y", &ys, &ny) || nx != ny) {
    g_free(xs);
    g_free(ys);
    return FALSE;
  }
  gboolean normalized = FALSE;
  if (gst_structure_get_boolean(s, "normalized", &normalized) && normalized) {
    for (guint i = 0; i < nx; i++) {
      xs[i] = roi->x + xs[i] * roi->w;
      ys[i] = roi->y + ys[i] * roi->h;
    }
  }
  *n_points = nx;
  if (x)
    *x = xs;
  else
    g_free(xs);
  if (y)
    *y = ys;
  else
    g_free(ys);
  return TRUE;
}

GstTaconiteEmbeddingMeta *gst_taconite_roi_get_embedding_meta(GstBuffer *buffer,
                                                              const GstVideoRegionOfInterestMeta *roi) {
  g_return_val_if_fail(GST_IS_BUFFER(buffer), NULL);
  g_return_val_if_fail(roi != NULL, NULL);
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    const GstVideoRegionOfInterestMeta *other = (const GstVideoRegionOfInterestMeta *)meta;
    if (other != roi && other->id == roi->id) return NULL; /* a shared id names no single face */
  }
  return gst_buffer_get_taconite_embedding_meta_for_roi(buffer, roi->id);
}

GList *gst_buffer_get_taconite_rois(GstBuffer *buffer) {
  g_return_val_if_fail(GST_IS_BUFFER(buffer), NULL);
  GList *rois = NULL;
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)))
    rois = g_list_prepend(rois, meta);
  return g_list_reverse(rois);
}

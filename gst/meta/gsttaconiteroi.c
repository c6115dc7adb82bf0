/* Typed reads of the taconite ROI params (gst/taconite/gsttaconiteroi.h); the landmarks are
 * gsttaconitelandmarks.c's. */
#include "gst/taconite/gsttaconiteroi.h"

#include <string.h>

#include "roi_values.h"

#define IDENTITY_PARAM "identity"
#define TRACK_PARAM "object_id"
#define DETECTION_PARAM "detection"
#define QUALITY_PARAM "quality"

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

static const GEnumValue track_state_values[] = {
    {GST_TACONITE_TRACK_STATE_NONE, "GST_TACONITE_TRACK_STATE_NONE", "none"},
    {GST_TACONITE_TRACK_STATE_TRACKED, "GST_TACONITE_TRACK_STATE_TRACKED", "tracked"},
    {GST_TACONITE_TRACK_STATE_PREDICTED, "GST_TACONITE_TRACK_STATE_PREDICTED", "predicted"},
    {0, NULL, NULL},
};

GType gst_taconite_track_state_get_type(void) {
  static GType type = 0;
  if (g_once_init_enter(&type)) {
    GType registered = g_enum_register_static("GstTaconiteTrackState", track_state_values);
    g_once_init_leave(&type, registered);
  }
  return type;
}

const gchar *gst_taconite_track_state_to_string(GstTaconiteTrackState state) {
  for (const GEnumValue *v = track_state_values; v->value_nick; v++)
    if (v->value == (gint)state) return v->value_nick;
  return "none";
}

gboolean gst_taconite_roi_has_param(const GstVideoRegionOfInterestMeta *roi, const gchar *name) {
  return name && taconite_roi_find_param(roi, name) != NULL;
}

gboolean gst_taconite_roi_get_box(const GstVideoRegionOfInterestMeta *roi, guint *x, guint *y, guint *w, guint *h) {
  if (!roi) return FALSE;
  if (x) *x = roi->x;
  if (y) *y = roi->y;
  if (w) *w = roi->w;
  if (h) *h = roi->h;
  /* 64-bit sums: a box whose far edge passes G_MAXUINT describes no frame area. */
  return roi->w > 0 && roi->h > 0 && (guint64)roi->x + roi->w <= G_MAXUINT && (guint64)roi->y + roi->h <= G_MAXUINT;
}

/* A finite number field @field of the param @name. */
static gboolean param_number(const GstVideoRegionOfInterestMeta *roi, const gchar *name, const gchar *field,
                             gdouble *out) {
  const GstStructure *s = taconite_roi_find_param(roi, name);
  gdouble value = 0.0;
  if (!s || !field || !taconite_value_number(gst_structure_get_value(s, field), &value)) return FALSE;
  if (out) *out = value;
  return TRUE;
}

/* A boolean field @field of the param @name. */
static gboolean param_boolean(const GstVideoRegionOfInterestMeta *roi, const gchar *name, const gchar *field,
                              gboolean *out) {
  const GstStructure *s = taconite_roi_find_param(roi, name);
  gboolean value = FALSE;
  if (!s || !gst_structure_get_boolean(s, field, &value)) return FALSE;
  if (out) *out = value;
  return TRUE;
}

gboolean gst_taconite_roi_get_detection_confidence(const GstVideoRegionOfInterestMeta *roi, gdouble *confidence) {
  return param_number(roi, DETECTION_PARAM, "confidence", confidence);
}

gboolean gst_taconite_roi_get_fresh(const GstVideoRegionOfInterestMeta *roi, gboolean *fresh) {
  return param_boolean(roi, DETECTION_PARAM, "fresh", fresh);
}

gboolean gst_taconite_roi_get_predicted(const GstVideoRegionOfInterestMeta *roi, gboolean *predicted) {
  return param_boolean(roi, DETECTION_PARAM, "predicted", predicted);
}

gboolean gst_taconite_roi_is_predicted(const GstVideoRegionOfInterestMeta *roi) {
  gboolean predicted = FALSE, fresh = TRUE;
  return (gst_taconite_roi_get_predicted(roi, &predicted) && predicted) ||
         (gst_taconite_roi_get_fresh(roi, &fresh) && !fresh);
}

gboolean gst_taconite_roi_get_track_id_from(const GstVideoRegionOfInterestMeta *roi, const gchar *id_param,
                                            gint64 *track_id) {
  gint64 id = 0;
  if (!roi || !id_param || !*id_param) return FALSE;
  for (GList *l = roi->params; l; l = l->next) {
    const GstStructure *s = l->data;
    if (!GST_IS_STRUCTURE(s)) continue;
    if ((gst_structure_has_name(s, id_param) && taconite_value_integer(gst_structure_get_value(s, "id"), &id)) ||
        taconite_value_integer(gst_structure_get_value(s, id_param), &id)) {
      if (track_id) *track_id = id;
      return TRUE;
    }
  }
  return FALSE;
}

gboolean gst_taconite_roi_get_track_id(const GstVideoRegionOfInterestMeta *roi, gint64 *track_id) {
  return gst_taconite_roi_get_track_id_from(roi, TRACK_PARAM, track_id);
}

const gchar *gst_taconite_roi_get_track_uid(const GstVideoRegionOfInterestMeta *roi) {
  const gchar *uid = taconite_structure_utf8(taconite_roi_find_param(roi, TRACK_PARAM), "uid");
  return uid && *uid ? uid : NULL;
}

GstTaconiteTrackState gst_taconite_roi_get_track_state(const GstVideoRegionOfInterestMeta *roi) {
  if (!gst_taconite_roi_get_track_id(roi, NULL)) return GST_TACONITE_TRACK_STATE_NONE;
  return gst_taconite_roi_is_predicted(roi) ? GST_TACONITE_TRACK_STATE_PREDICTED : GST_TACONITE_TRACK_STATE_TRACKED;
}

gboolean gst_taconite_roi_get_quality(const GstVideoRegionOfInterestMeta *roi, gdouble *quality) {
  return param_number(roi, QUALITY_PARAM, "embedding-score", quality) ||
         param_number(roi, QUALITY_PARAM, "score", quality);
}

gboolean gst_taconite_roi_get_quality_field(const GstVideoRegionOfInterestMeta *roi, const gchar *field,
                                            gdouble *value) {
  return param_number(roi, QUALITY_PARAM, field, value);
}

/* The identity param's label_id: an integer in gint range. */
static gboolean identity_label_id(const GstStructure *s, gint *label_id) {
  gint64 id = 0;
  if (!s || !taconite_value_integer(gst_structure_get_value(s, "label_id"), &id) || id < G_MININT || id > G_MAXINT)
    return FALSE;
  *label_id = (gint)id;
  return TRUE;
}

GstTaconiteLabelState gst_taconite_roi_get_label_state(const GstVideoRegionOfInterestMeta *roi) {
  const GstStructure *s = taconite_roi_find_param(roi, IDENTITY_PARAM);
  if (!s) return GST_TACONITE_LABEL_STATE_NONE;
  const gchar *state = gst_structure_get_string(s, "label_state");
  if (state) {
    if (strcmp(state, "known") == 0) return GST_TACONITE_LABEL_STATE_KNOWN;
    if (strcmp(state, "unknown") == 0) return GST_TACONITE_LABEL_STATE_UNKNOWN;
    return GST_TACONITE_LABEL_STATE_PENDING; /* "pending", or a state newer than this library */
  }
  /* Written before label_state existed (or by another element): a label is a decision. */
  gint label_id = 0;
  if (identity_label_id(s, &label_id) && label_id == -1) return GST_TACONITE_LABEL_STATE_UNKNOWN;
  return gst_structure_get_string(s, "label") ? GST_TACONITE_LABEL_STATE_KNOWN : GST_TACONITE_LABEL_STATE_PENDING;
}

const gchar *gst_taconite_roi_get_label(const GstVideoRegionOfInterestMeta *roi) {
  const GstStructure *s = taconite_roi_find_param(roi, IDENTITY_PARAM);
  return s ? gst_structure_get_string(s, "label") : NULL;
}

gboolean gst_taconite_roi_get_label_id(const GstVideoRegionOfInterestMeta *roi, gint *label_id) {
  gint id = 0;
  if (!identity_label_id(taconite_roi_find_param(roi, IDENTITY_PARAM), &id)) return FALSE;
  if (label_id) *label_id = id;
  return TRUE;
}

gboolean gst_taconite_roi_get_confidence(const GstVideoRegionOfInterestMeta *roi, gdouble *confidence) {
  return param_number(roi, IDENTITY_PARAM, "confidence", confidence);
}

GstTaconiteEmbeddingMeta *gst_taconite_roi_get_embedding_meta(GstBuffer *buffer,
                                                              const GstVideoRegionOfInterestMeta *roi) {
  g_return_val_if_fail(GST_IS_BUFFER(buffer), NULL);
  if (!roi) return NULL; /* no face: no embedding, like every other read */
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

/* The value reads the ROI accessors share (roi_values.h). */
#include "roi_values.h"

#include <math.h>

GstStructure *taconite_roi_find_param(const GstVideoRegionOfInterestMeta *roi, const gchar *name) {
  if (!roi) return NULL;
  for (GList *l = roi->params; l; l = l->next)
    if (GST_IS_STRUCTURE(l->data) && gst_structure_has_name(l->data, name)) return l->data;
  return NULL;
}

gboolean taconite_value_any_number(const GValue *v, gdouble *out) {
  gdouble d;
  if (!v) return FALSE;
  if (G_VALUE_HOLDS_DOUBLE(v))
    d = g_value_get_double(v);
  else if (G_VALUE_HOLDS_FLOAT(v))
    d = g_value_get_float(v);
  else if (G_VALUE_HOLDS_INT(v))
    d = g_value_get_int(v);
  else if (G_VALUE_HOLDS_UINT(v))
    d = g_value_get_uint(v);
  else if (G_VALUE_HOLDS_INT64(v))
    d = (gdouble)g_value_get_int64(v);
  else if (G_VALUE_HOLDS_UINT64(v))
    d = (gdouble)g_value_get_uint64(v);
  else
    return FALSE;
  *out = d;
  return TRUE;
}

gboolean taconite_value_number(const GValue *v, gdouble *out) {
  gdouble d = 0.0;
  if (!taconite_value_any_number(v, &d) || !isfinite(d)) return FALSE;
  *out = d;
  return TRUE;
}

gboolean taconite_value_integer(const GValue *v, gint64 *out) {
  if (!v) return FALSE;
  if (G_VALUE_HOLDS_INT(v))
    *out = g_value_get_int(v);
  else if (G_VALUE_HOLDS_UINT(v))
    *out = g_value_get_uint(v);
  else if (G_VALUE_HOLDS_INT64(v))
    *out = g_value_get_int64(v);
  else if (G_VALUE_HOLDS_UINT64(v) && g_value_get_uint64(v) <= (guint64)G_MAXINT64)
    *out = (gint64)g_value_get_uint64(v);
  else
    return FALSE;
  return TRUE;
}

const gchar *taconite_structure_utf8(const GstStructure *s, const gchar *field) {
  const gchar *text = s ? gst_structure_get_string(s, field) : NULL;
  return text && g_utf8_validate(text, -1, NULL) ? text : NULL;
}

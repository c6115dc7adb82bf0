/* gst_taconite_roi_get_landmarks: every landmark encoding the taconite elements accept
 * (gst/taconite/gsttaconiteroi.h lists them), read in one place so elements and applications see
 * the same points. */
#include <string.h>

#include "gst/taconite/gsttaconiteroi.h"
#include "roi_values.h"

/* Points read from one param: frame pixels, at most TACONITE_MAX_POINTS. */
typedef struct {
  gdouble x[TACONITE_MAX_POINTS];
  gdouble y[TACONITE_MAX_POINTS];
  guint n;
} Points;

static const GValue *nth_value(const GValue *v, guint i) {
  return GST_VALUE_HOLDS_ARRAY(v) ? gst_value_array_get_value(v, i) : gst_value_list_get_value(v, i);
}

/* The size of an array or list field, 0 when it is neither. */
static guint sequence_size(const GValue *v) {
  if (v && GST_VALUE_HOLDS_ARRAY(v)) return gst_value_array_get_size(v);
  if (v && GST_VALUE_HOLDS_LIST(v)) return gst_value_list_get_size(v);
  return 0;
}

/* The numbers of array or list @v into @out (room for @max); FALSE when empty, too long or not all
 * numbers. The size is checked before anything is read, so a huge array costs nothing. NaN and
 * infinities are returned as written: the alignment refuses them, and taconitepublish reports them. */
static gboolean read_numbers(const GValue *v, gdouble *out, guint max, guint *n) {
  const guint size = sequence_size(v);
  if (size == 0 || size > max) return FALSE;
  for (guint i = 0; i < size; i++)
    if (!taconite_value_any_number(nth_value(v, i), &out[i])) return FALSE;
  *n = size;
  return TRUE;
}

static void from_roi_fraction(const GstVideoRegionOfInterestMeta *roi, Points *p) {
  for (guint i = 0; i < p->n; i++) {
    p->x[i] = roi->x + p->x[i] * roi->w;
    p->y[i] = roi->y + p->y[i] * roi->h;
  }
}

/* taconitedetect's and taconitelandmarks': "landmarks" with x and y, frame pixels or (normalized)
 * fractions of the ROI box. */
static gboolean landmarks_param(const GstVideoRegionOfInterestMeta *roi, const GstStructure *s, Points *p) {
  guint nx = 0, ny = 0;
  gboolean normalized = FALSE;
  if (!gst_structure_has_name(s, "landmarks") ||
      !read_numbers(gst_structure_get_value(s, "x"), p->x, TACONITE_MAX_POINTS, &nx) ||
      !read_numbers(gst_structure_get_value(s, "y"), p->y, TACONITE_MAX_POINTS, &ny) || nx != ny)
    return FALSE;
  p->n = nx;
  if (gst_structure_get_boolean(s, "normalized", &normalized) && normalized) from_roi_fraction(roi, p);
  return TRUE;
}

/* DL Streamer's data_buffer: a GVariant byte string of little-endian float32. */
static gboolean variant_floats(const GValue *v, gdouble *out, guint max, guint *n) {
  if (!v || !G_VALUE_HOLDS_VARIANT(v)) return FALSE;
  GVariant *variant = g_value_get_variant(v);
  if (!variant || !g_variant_is_of_type(variant, G_VARIANT_TYPE_BYTESTRING)) return FALSE;
  gsize size = 0;
  const guint8 *bytes = g_variant_get_fixed_array(variant, &size, 1);
  if (size == 0 || size % 4 != 0 || size / 4 > max) return FALSE;
  for (gsize i = 0; i < size / 4; i++) {
    guint32 le = 0;
    gfloat f = 0.0f;
    memcpy(&le, bytes + 4 * i, 4);
    le = GUINT32_FROM_LE(le);
    memcpy(&f, &le, 4);
    out[i] = f;
  }
  *n = (guint)(size / 4);
  return TRUE;
}

/* DL Streamer's: any param with format "landmark_points", x0,y0,x1,y1,... fractions of the ROI box
 * in "data" (array or list of numbers) or "data_buffer". */
static gboolean dlstreamer_points(const GstVideoRegionOfInterestMeta *roi, const GstStructure *s, Points *p) {
  const gchar *format = gst_structure_get_string(s, "format");
  guint n = 0;
  if (!format || strcmp(format, "landmark_points") != 0) return FALSE;
  gdouble *flat = g_new(gdouble, 2 * TACONITE_MAX_POINTS);
  gboolean ok = read_numbers(gst_structure_get_value(s, "data"), flat, 2 * TACONITE_MAX_POINTS, &n) ||
                variant_floats(gst_structure_get_value(s, "data_buffer"), flat, 2 * TACONITE_MAX_POINTS, &n);
  ok = ok && n % 2 == 0;
  if (ok) {
    p->n = n / 2;
    for (guint i = 0; i < p->n; i++) {
      p->x[i] = flat[2 * i];
      p->y[i] = flat[2 * i + 1];
    }
    from_roi_fraction(roi, p);
  }
  g_free(flat);
  return ok;
}

/* facedetect's: the eye-pair box eyes->x, eyes->y, eyes->width, eyes->height (frame pixels) in any
 * param; the eye centres are at 1/4 and 3/4 of its width. */
static gboolean facedetect_eyes(const GstStructure *s, Points *p) {
  gdouble x, y, w, h;
  if (!taconite_value_number(gst_structure_get_value(s, "eyes->x"), &x) ||
      !taconite_value_number(gst_structure_get_value(s, "eyes->y"), &y) ||
      !taconite_value_number(gst_structure_get_value(s, "eyes->width"), &w) ||
      !taconite_value_number(gst_structure_get_value(s, "eyes->height"), &h) || !(w > 0))
    return FALSE;
  p->n = 2;
  p->x[0] = x + 0.25 * w;
  p->x[1] = x + 0.75 * w;
  p->y[0] = p->y[1] = y + 0.5 * h;
  return TRUE;
}

gboolean gst_taconite_roi_get_landmarks(const GstVideoRegionOfInterestMeta *roi, gdouble **x, gdouble **y,
                                        guint *n_points) {
  g_return_val_if_fail(n_points != NULL, FALSE);
  *n_points = 0;
  if (x) *x = NULL;
  if (y) *y = NULL;
  if (!roi) return FALSE;
  Points *p = g_new0(Points, 1);
  gboolean found = FALSE;
  for (GList *l = roi->params; l && !found; l = l->next) {
    const GstStructure *s = l->data;
    if (!GST_IS_STRUCTURE(s)) continue;
    found = landmarks_param(roi, s, p) || dlstreamer_points(roi, s, p) || facedetect_eyes(s, p);
  }
  if (found) {
    *n_points = p->n;
    if (x) *x = g_memdup2(p->x, p->n * sizeof(gdouble));
    if (y) *y = g_memdup2(p->y, p->n * sizeof(gdouble));
  }
  g_free(p);
  return found;
}

/* GstTaconiteEmbeddingMeta registration, transform and the "taconite-embedding" ROI params. */
#include "gst/taconite/gsttaconitemeta.h"

#include <gst/video/video.h>

#include <math.h>
#include <string.h>

GType gst_taconite_embedding_meta_api_get_type(void) {
  static GType type = 0;
  /* No tags: an embedding does not depend on the buffer's size, orientation or colours, so
   * every transform (basetransform's default included) may keep it. Converters therefore COPY it:
   * videoconvertscale only SCALE-transforms metas tagged "size". */
  static const gchar *tags[] = {NULL};
  if (g_once_init_enter(&type)) {
    GType registered = gst_meta_api_type_register("GstTaconiteEmbeddingMetaAPI", tags);
    g_once_init_leave(&type, registered);
  }
  return type;
}

static gboolean embedding_meta_init(GstMeta *meta, G_GNUC_UNUSED gpointer params, G_GNUC_UNUSED GstBuffer *buffer) {
  GstTaconiteEmbeddingMeta *emeta = (GstTaconiteEmbeddingMeta *)meta;
  emeta->roi_id = GST_TACONITE_WHOLE_BUFFER_ROI_ID;
  emeta->dim = 0;
  emeta->embedding = NULL;
  emeta->norm = 0.0;
  emeta->model = NULL;
  emeta->backend = NULL;
  emeta->aligned = FALSE;
  emeta->status = GST_TACONITE_EMBEDDING_COMPUTED;
  emeta->cache_age = 0;
  emeta->precision = NULL;
  memset(emeta->_gst_reserved, 0, sizeof emeta->_gst_reserved);
  return TRUE;
}

static void embedding_meta_free(GstMeta *meta, G_GNUC_UNUSED GstBuffer *buffer) {
  GstTaconiteEmbeddingMeta *emeta = (GstTaconiteEmbeddingMeta *)meta;
  g_clear_pointer(&emeta->embedding, g_free);
  g_clear_pointer(&emeta->model, g_free);
  g_clear_pointer(&emeta->backend, g_free);
  g_clear_pointer(&emeta->precision, g_free);
}

/* Deep copy of every field; the ROI id is kept because the ROI meta keeps its id on COPY and SCALE. */
static void embedding_meta_copy_fields(GstTaconiteEmbeddingMeta *dest, const GstTaconiteEmbeddingMeta *src) {
  dest->roi_id = src->roi_id;
  dest->dim = src->dim;
  dest->embedding = src->dim ? g_memdup2(src->embedding, src->dim * sizeof(gfloat)) : NULL;
  dest->norm = src->norm;
  dest->model = g_strdup(src->model);
  dest->backend = g_strdup(src->backend);
  dest->aligned = src->aligned;
  dest->status = src->status;
  dest->cache_age = src->cache_age;
  dest->precision = g_strdup(src->precision);
}

static gboolean embedding_meta_transform(GstBuffer *dest, GstMeta *meta, G_GNUC_UNUSED GstBuffer *buffer, GQuark type,
                                         gpointer data) {
  const GstTaconiteEmbeddingMeta *src = (const GstTaconiteEmbeddingMeta *)meta;
  if (GST_META_TRANSFORM_IS_COPY(type)) {
    const GstMetaTransformCopy *copy = (const GstMetaTransformCopy *)data;
    /* A region copy (part of the memory) keeps the face only when the whole buffer is copied. */
    if (copy->region && !(copy->offset == 0 && copy->size == (gsize)-1)) return FALSE;
  } else if (!GST_VIDEO_META_TRANSFORM_IS_SCALE(type)) {
    return FALSE; /* unknown transform: do not guess */
  } /* SCALE: no stock 1.22 element sends it to a tagless meta, but any element may; nothing to scale. */
  GstTaconiteEmbeddingMeta *out =
      (GstTaconiteEmbeddingMeta *)gst_buffer_add_meta(dest, GST_TACONITE_EMBEDDING_META_INFO, NULL);
  if (!out) return FALSE;
  embedding_meta_copy_fields(out, src);
  return TRUE;
}

const GstMetaInfo *gst_taconite_embedding_meta_get_info(void) {
  static const GstMetaInfo *info = NULL;
  if (g_once_init_enter((GstMetaInfo **)&info)) {
    const GstMetaInfo *registered = gst_meta_register(
        GST_TACONITE_EMBEDDING_META_API_TYPE, "GstTaconiteEmbeddingMeta", sizeof(GstTaconiteEmbeddingMeta),
        embedding_meta_init, embedding_meta_free, embedding_meta_transform);
    g_once_init_leave((GstMetaInfo **)&info, (GstMetaInfo *)registered);
  }
  return info;
}

GstTaconiteEmbeddingMeta *gst_buffer_add_taconite_embedding_meta(GstBuffer *buffer, gint roi_id,
                                                                const gfloat *embedding, guint dim, gdouble norm,
                                                                const gchar *model, const gchar *backend,
                                                                gboolean aligned) {
  g_return_val_if_fail(GST_IS_BUFFER(buffer), NULL);
  g_return_val_if_fail(gst_buffer_is_writable(buffer), NULL);
  g_return_val_if_fail(dim == 0 || embedding != NULL, NULL);

  GstTaconiteEmbeddingMeta *meta =
      (GstTaconiteEmbeddingMeta *)gst_buffer_add_meta(buffer, GST_TACONITE_EMBEDDING_META_INFO, NULL);
  if (!meta) return NULL;
  meta->roi_id = roi_id;
  meta->dim = dim;
  meta->embedding = dim ? g_memdup2(embedding, dim * sizeof(gfloat)) : NULL;
  meta->norm = norm;
  meta->model = g_strdup(model ? model : "");
  meta->backend = g_strdup(backend ? backend : "");
  meta->aligned = aligned;
  meta->status = dim ? GST_TACONITE_EMBEDDING_COMPUTED : GST_TACONITE_EMBEDDING_SKIPPED;
  return meta;
}

GstTaconiteEmbeddingMeta *gst_buffer_get_taconite_embedding_meta_for_roi(GstBuffer *buffer, gint roi_id) {
  g_return_val_if_fail(GST_IS_BUFFER(buffer), NULL);
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_TACONITE_EMBEDDING_META_API_TYPE))) {
    GstTaconiteEmbeddingMeta *emeta = (GstTaconiteEmbeddingMeta *)meta;
    if (emeta->roi_id == roi_id) return emeta;
  }
  return NULL;
}

GList *gst_buffer_get_taconite_embedding_metas(GstBuffer *buffer) {
  g_return_val_if_fail(GST_IS_BUFFER(buffer), NULL);
  GList *metas = NULL;
  gpointer state = NULL;
  GstMeta *meta;
  while ((meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_TACONITE_EMBEDDING_META_API_TYPE)))
    metas = g_list_prepend(metas, meta);
  return g_list_reverse(metas);
}

const gfloat *gst_taconite_embedding_meta_get_embedding(const GstTaconiteEmbeddingMeta *meta, guint *dim) {
  g_return_val_if_fail(dim != NULL, NULL);
  *dim = 0;
  g_return_val_if_fail(meta != NULL, NULL);
  *dim = meta->dim;
  return meta->embedding;
}

gdouble gst_taconite_embedding_meta_cosine(const GstTaconiteEmbeddingMeta *a, const GstTaconiteEmbeddingMeta *b) {
  g_return_val_if_fail(a != NULL && b != NULL, 0.0);
  if (a->dim == 0 || a->dim != b->dim) return 0.0;
  gdouble dot = 0.0, na = 0.0, nb = 0.0;
  for (guint i = 0; i < a->dim; i++) {
    dot += (gdouble)a->embedding[i] * b->embedding[i];
    na += (gdouble)a->embedding[i] * a->embedding[i];
    nb += (gdouble)b->embedding[i] * b->embedding[i];
  }
  if (na == 0.0 || nb == 0.0) return 0.0;
  return dot / (sqrt(na) * sqrt(nb));
}

GstStructure *gst_taconite_embedding_params_new(const gfloat *embedding, guint dim, gdouble norm, const gchar *model,
                                                const gchar *backend, gboolean aligned) {
  g_return_val_if_fail(dim == 0 || embedding != NULL, NULL);
  guint32 *le = g_new(guint32, dim ? dim : 1);
  for (guint i = 0; i < dim; i++) {
    guint32 bits;
    memcpy(&bits, &embedding[i], sizeof bits);
    le[i] = GUINT32_TO_LE(bits);
  }
  GBytes *bytes = g_bytes_new_take(le, dim * sizeof(guint32));
  GstStructure *params = gst_structure_new(GST_TACONITE_EMBEDDING_PARAMS_NAME, "norm", G_TYPE_DOUBLE, norm, "model",
                                           G_TYPE_STRING, model ? model : "", "backend", G_TYPE_STRING,
                                           backend ? backend : "", "aligned", G_TYPE_BOOLEAN, aligned, "dim",
                                           G_TYPE_UINT, dim, "embedding", G_TYPE_BYTES, bytes, NULL);
  g_bytes_unref(bytes);
  return params;
}

gfloat *gst_taconite_embedding_params_get_embedding(const GstStructure *params, guint *dim, gdouble *norm) {
  g_return_val_if_fail(params != NULL && dim != NULL, NULL);
  *dim = 0;
  if (!gst_structure_has_name(params, GST_TACONITE_EMBEDDING_PARAMS_NAME)) return NULL;
  guint declared = 0;
  const GValue *value = gst_structure_get_value(params, "embedding");
  if (!gst_structure_get_uint(params, "dim", &declared) || !value || !G_VALUE_HOLDS(value, G_TYPE_BYTES))
    return NULL;
  GBytes *bytes = g_value_get_boxed(value);
  gsize size = 0;
  const guint32 *le = bytes ? g_bytes_get_data(bytes, &size) : NULL;
  if (size != (gsize)declared * sizeof(guint32)) return NULL;
  if (norm && !gst_structure_get_double(params, "norm", norm)) return NULL;
  gfloat *out = g_new(gfloat, declared ? declared : 1);
  for (guint i = 0; i < declared; i++) {
    guint32 word;
    memcpy(&word, &le[i], sizeof word); /* GBytes data need not be 4-byte aligned */
    word = GUINT32_FROM_LE(word);
    memcpy(&out[i], &word, sizeof word);
  }
  *dim = declared;
  return out;
}

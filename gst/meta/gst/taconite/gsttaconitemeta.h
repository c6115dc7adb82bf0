/* gsttaconitemeta: face embeddings attached to video buffers by the taconiteadaface element.
 *
 * Link with pkg-config `gsttaconitemeta-1.0`; from Python use the GObject-Introspection namespace
 * GstTaconite 1.0. Two carriers exist:
 *  - GstTaconiteEmbeddingMeta: one per face. Registered without API tags (the embedding does not
 *    depend on the frame's size, orientation or colours), so every converter copies it: videoconvert,
 *    videoscale, tee, queue and BaseTransform's default all keep it.
 *  - A "taconite-embedding" GstStructure in the params of the face's GstVideoRegionOfInterestMeta,
 *    for applications that only read ROI metas. GStreamer 1.22 loses it in videoconvert and
 *    videoscale: both SCALE-transform the (size-tagged) ROI meta, and 1.22's ROI SCALE transform
 *    does not copy params. Read the embedding meta after a converter.
 *
 * Contract: all functions are thread-safe in the GStreamer sense (metas follow their buffer's
 * writability rules); embeddings are 'dim' little-endian float32 values, L2-normalised.
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

#ifndef GST_TACONITE_META_API
#define GST_TACONITE_META_API __attribute__((visibility("default"))) extern
#endif

/**
 * GstTaconiteEmbeddingStatus:
 * @GST_TACONITE_EMBEDDING_COMPUTED: computed for this buffer.
 * @GST_TACONITE_EMBEDDING_CACHED: re-attached from an earlier frame of the same track
 *   (track reuse, `reinfer-interval` > 1; see @cache_age).
 * @GST_TACONITE_EMBEDDING_SKIPPED: not computed (`leaky=skip`: the engine fell behind); @dim is 0.
 */
typedef enum {
  GST_TACONITE_EMBEDDING_COMPUTED = 0,
  GST_TACONITE_EMBEDDING_CACHED = 1,
  GST_TACONITE_EMBEDDING_SKIPPED = 2,
} GstTaconiteEmbeddingStatus;

/**
 * GstTaconiteEmbeddingMeta:
 * @meta: parent #GstMeta.
 * @roi_id: id of the #GstVideoRegionOfInterestMeta this face belongs to; -1 when the whole
 *   buffer is the face (input-mode=crops).
 * @dim: number of values in @embedding (512 for AdaFace IR), 0 when skipped.
 * @embedding: @dim floats, L2-normalised (compare two faces with a dot product / cosine).
 * @norm: L2 norm of the raw network output before normalisation (AdaFace's quality signal).
 * @model: model name from the bundle (e.g. "IR-18"), never NULL.
 * @backend: backend that computed it (e.g. "cpu-reference"), never NULL.
 * @aligned: TRUE when the face was warped to the 5-point template, FALSE for a box crop.
 * @status: how this embedding was obtained.
 * @cache_age: frames since the embedding was computed (0 unless @status is CACHED).
 * @precision: (nullable): arithmetic the backend ran ("f32", "bf16", "int8" or "bf16-exact"); NULL when
 *   the producer did not say. Since: 0.3
 *
 * The meta owns @embedding, @model, @backend and @precision.
 */
typedef struct {
  GstMeta meta;

  gint roi_id;
  guint dim;
  gfloat *embedding;
  gdouble norm;
  gchar *model;
  gchar *backend;
  gboolean aligned;
  GstTaconiteEmbeddingStatus status;
  guint cache_age;
  gchar *precision;

  /*< private >*/
  gpointer _gst_reserved[GST_PADDING];
} GstTaconiteEmbeddingMeta;

/* The ROI param structure name and the ROI id used for whole-buffer crops. */
#define GST_TACONITE_EMBEDDING_PARAMS_NAME "taconite-embedding"
#define GST_TACONITE_WHOLE_BUFFER_ROI_ID (-1)

GST_TACONITE_META_API GType gst_taconite_embedding_meta_api_get_type(void);
#define GST_TACONITE_EMBEDDING_META_API_TYPE (gst_taconite_embedding_meta_api_get_type())

/**
 * gst_taconite_embedding_meta_get_info: (skip)
 *
 * Returns: the registered #GstMetaInfo of #GstTaconiteEmbeddingMeta.
 */
GST_TACONITE_META_API const GstMetaInfo *gst_taconite_embedding_meta_get_info(void);
#define GST_TACONITE_EMBEDDING_META_INFO (gst_taconite_embedding_meta_get_info())

/**
 * gst_buffer_add_taconite_embedding_meta:
 * @buffer: a writable #GstBuffer
 * @roi_id: the face's ROI id, or -1 for the whole buffer
 * @embedding: (array length=dim) (nullable): @dim already L2-normalised floats, copied
 * @dim: number of values in @embedding
 * @norm: L2 norm of the raw network output
 * @model: (nullable): model name, stored as "" when NULL
 * @backend: (nullable): backend name, stored as "" when NULL
 * @aligned: whether the face was warped to the template
 *
 * Returns: (transfer none) (nullable): the new meta, or NULL on invalid arguments.
 */
GST_TACONITE_META_API GstTaconiteEmbeddingMeta *gst_buffer_add_taconite_embedding_meta(
    GstBuffer *buffer, gint roi_id, const gfloat *embedding, guint dim, gdouble norm, const gchar *model,
    const gchar *backend, gboolean aligned);

/* The first meta on @buffer (any ROI), or NULL. Iterate all of them with
 * gst_buffer_iterate_meta_filtered (buffer, &state, GST_TACONITE_EMBEDDING_META_API_TYPE). */
#define gst_buffer_get_taconite_embedding_meta(b) \
  ((GstTaconiteEmbeddingMeta *)gst_buffer_get_meta((b), GST_TACONITE_EMBEDDING_META_API_TYPE))

/**
 * gst_buffer_get_taconite_embedding_meta_for_roi:
 * @buffer: a #GstBuffer
 * @roi_id: a ROI id, or -1 for the whole-buffer crop
 *
 * Returns: (transfer none) (nullable): the meta belonging to ROI @roi_id, or NULL.
 */
GST_TACONITE_META_API GstTaconiteEmbeddingMeta *gst_buffer_get_taconite_embedding_meta_for_roi(GstBuffer *buffer,
                                                                                              gint roi_id);

/**
 * gst_buffer_get_taconite_embedding_metas:
 * @buffer: a #GstBuffer
 *
 * Every face of @buffer, in the order gst_buffer_iterate_meta() visits them. The list is
 * valid while @buffer is and is not modified; free it with g_list_free(). This is the
 * binding-friendly way to reach every face (Python cannot drive gst_buffer_iterate_meta_filtered).
 *
 * Returns: (transfer container) (element-type GstTaconiteEmbeddingMeta): the metas, NULL when none.
 */
GST_TACONITE_META_API GList *gst_buffer_get_taconite_embedding_metas(GstBuffer *buffer);

/**
 * gst_taconite_embedding_meta_get_embedding:
 * @meta: a #GstTaconiteEmbeddingMeta
 * @dim: (out): number of values returned
 *
 * The embedding as an array (bindings cannot read the @embedding field itself).
 *
 * Returns: (array length=dim) (transfer none) (nullable): @meta's @dim floats, NULL when skipped.
 */
GST_TACONITE_META_API const gfloat *gst_taconite_embedding_meta_get_embedding(const GstTaconiteEmbeddingMeta *meta,
                                                                             guint *dim);

/**
 * gst_taconite_embedding_meta_cosine:
 * @a: a #GstTaconiteEmbeddingMeta
 * @b: another one
 *
 * Returns: the cosine similarity of the two embeddings in double precision; 0 when either is
 * skipped or the dimensions differ.
 */
GST_TACONITE_META_API gdouble gst_taconite_embedding_meta_cosine(const GstTaconiteEmbeddingMeta *a,
                                                                const GstTaconiteEmbeddingMeta *b);

/**
 * gst_taconite_embedding_params_new:
 * @embedding: (array length=dim) (nullable): @dim floats
 * @dim: number of values in @embedding
 * @norm: L2 norm of the raw network output
 * @model: (nullable): model name
 * @backend: (nullable): backend name
 * @aligned: whether the face was warped to the template
 *
 * A new "taconite-embedding" structure: norm (double), model (string), backend (string),
 * aligned (boolean), dim (uint), embedding (GBytes, dim little-endian float32).
 *
 * Returns: (transfer full): the structure.
 */
GST_TACONITE_META_API GstStructure *gst_taconite_embedding_params_new(const gfloat *embedding, guint dim,
                                                                     gdouble norm, const gchar *model,
                                                                     const gchar *backend, gboolean aligned);

/**
 * gst_taconite_embedding_params_get_embedding:
 * @params: a "taconite-embedding" #GstStructure
 * @dim: (out): number of values returned (0 on error)
 * @norm: (out) (optional): the stored norm
 *
 * Returns: (array length=dim) (transfer full) (nullable): a new array of *@dim floats (g_free it),
 * or NULL when @params is not a valid embedding structure.
 */
GST_TACONITE_META_API gfloat *gst_taconite_embedding_params_get_embedding(const GstStructure *params, guint *dim,
                                                                         gdouble *norm);

G_END_DECLS

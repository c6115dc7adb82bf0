/* gsttaconiteroi: typed reads of what the taconite elements write on a face's
 * GstVideoRegionOfInterestMeta, so no application hard-codes param names or their integer types.
 * The elements read the ROI with these same functions, so an application sees the face they saw;
 * the writes are gsttaconiteface.h's.
 *
 * Link with pkg-config `gsttaconitemeta-1.0`; from Python use GstTaconite 1.0 (e.g.
 * GstTaconite.roi_get_label(roi)). The params read (docs/gstreamer.md, "The face contract"):
 *  - "detection", fields "confidence" (number), "fresh" and "predicted" (booleans): the detector's
 *    (taconitedetect, taconitelandmarks) and the tracker's word on the box;
 *  - "object_id", field "id" (any integer type): the tracking id (taconitetrack, DL Streamer gvatrack), and
 *    "uid" (string): the track's uid (taconitetrack);
 *  - "quality", fields "score", "embedding-score" and its parts (numbers): taconiteadaface's;
 *  - "identity", fields "label_state", "label", "label_id", "confidence": taconiteidentify's answer;
 *  - landmarks, in the first of these encodings a param carries (at most 1024 points):
 *    1. "landmarks", fields "x" and "y" (arrays or lists of numbers, frame pixels; "normalized" = TRUE:
 *       fractions of the ROI box): taconitedetect's and taconitelandmarks' points;
 *    2. DL Streamer's: any param with "format" = "landmark_points" and x0,y0,x1,y1,... fractions of the
 *       ROI box in "data" (array or list of numbers) or "data_buffer" (GVariant byte string of
 *       little-endian float32);
 *    3. facedetect's: "eyes->x", "eyes->y", "eyes->width", "eyes->height" (finite, the eye-pair box, frame pixels)
 *       in any param: two points, the eye centres at 1/4 and 3/4 of its width.
 * Numbers are read from any numeric GType; integers out of the result's range, a uid that is not UTF-8
 * and (except in landmarks, returned as written for the caller to judge) NaN and infinities are
 * refused. Every function only reads; a NULL or foreign ROI gives the "absent" answer (FALSE, NULL,
 * NONE), never a crash.
 */
#pragma once

#include <gst/gst.h>
#include <gst/taconite/gsttaconitemeta.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

/**
 * GstTaconiteLabelState:
 * @GST_TACONITE_LABEL_STATE_NONE: no "identity" param: no taconiteidentify judged this face.
 * @GST_TACONITE_LABEL_STATE_PENDING: the face's track is still voting: no label yet.
 * @GST_TACONITE_LABEL_STATE_KNOWN: decided on a gallery identity (label_id >= 1).
 * @GST_TACONITE_LABEL_STATE_UNKNOWN: decided: not in the gallery (label "unknown", label_id -1).
 *
 * Whether a face's name is decided. Since: 0.5
 */
typedef enum {
  GST_TACONITE_LABEL_STATE_NONE = 0,
  GST_TACONITE_LABEL_STATE_PENDING = 1,
  GST_TACONITE_LABEL_STATE_KNOWN = 2,
  GST_TACONITE_LABEL_STATE_UNKNOWN = 3,
} GstTaconiteLabelState;

GST_TACONITE_META_API GType gst_taconite_label_state_get_type(void);
#define GST_TACONITE_TYPE_LABEL_STATE (gst_taconite_label_state_get_type())

/**
 * gst_taconite_label_state_to_string:
 * @state: a #GstTaconiteLabelState
 *
 * Returns: (transfer none): "none", "pending", "known" or "unknown" (the JSON's and the ROI param's
 * spelling); "none" for a value outside the enum.
 */
GST_TACONITE_META_API const gchar *gst_taconite_label_state_to_string(GstTaconiteLabelState state);

/**
 * GstTaconiteTrackState:
 * @GST_TACONITE_TRACK_STATE_NONE: no tracking id: no tracker upstream, or it gave the face none.
 * @GST_TACONITE_TRACK_STATE_TRACKED: tracked, and the box was measured by a detector on this frame.
 * @GST_TACONITE_TRACK_STATE_PREDICTED: tracked, the box carried by the tracker (no detection this
 *   frame; see gst_taconite_roi_is_predicted()).
 *
 * Whether a face is tracked and its box measured, derived from the "object_id" and "detection"
 * params. Since: 0.6
 */
typedef enum {
  GST_TACONITE_TRACK_STATE_NONE = 0,
  GST_TACONITE_TRACK_STATE_TRACKED = 1,
  GST_TACONITE_TRACK_STATE_PREDICTED = 2,
} GstTaconiteTrackState;

GST_TACONITE_META_API GType gst_taconite_track_state_get_type(void);
#define GST_TACONITE_TYPE_TRACK_STATE (gst_taconite_track_state_get_type())

/**
 * gst_taconite_track_state_to_string:
 * @state: a #GstTaconiteTrackState
 *
 * Returns: (transfer none): "none", "tracked" or "predicted"; "none" for a value outside the enum.
 * Since: 0.6
 */
GST_TACONITE_META_API const gchar *gst_taconite_track_state_to_string(GstTaconiteTrackState state);

/**
 * gst_taconite_roi_has_param:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @name: (nullable): a param name ("detection", "quality", ...)
 *
 * Returns: TRUE when @roi carries a param named @name (whatever its fields). Since: 0.6
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_has_param(const GstVideoRegionOfInterestMeta *roi, const gchar *name);

/**
 * gst_taconite_roi_get_box:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @x: (out) (optional): left edge, frame pixels
 * @y: (out) (optional): top edge
 * @w: (out) (optional): width
 * @h: (out) (optional): height
 *
 * The ROI's box as written (nothing is clamped to a frame; the caller knows the frame). Since: 0.6
 *
 * Returns: TRUE when the box is usable: not empty and its far edges within G_MAXUINT; FALSE for a
 * NULL @roi (outputs untouched) or an unusable box (outputs set).
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_get_box(const GstVideoRegionOfInterestMeta *roi, guint *x, guint *y,
                                                        guint *w, guint *h);

/**
 * gst_taconite_roi_get_detection_confidence:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @confidence: (out) (optional): the detector's confidence (0..1 from taconitedetect)
 *
 * Returns: TRUE when @roi's "detection" param has a finite number "confidence". Since: 0.6
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_get_detection_confidence(const GstVideoRegionOfInterestMeta *roi,
                                                                         gdouble *confidence);

/**
 * gst_taconite_roi_get_fresh:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @fresh: (out) (optional): FALSE when the detector carried the box from an earlier frame
 *   (taconitedetect between its `interval` frames)
 *
 * Returns: TRUE when @roi's "detection" param has a boolean "fresh". Since: 0.6
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_get_fresh(const GstVideoRegionOfInterestMeta *roi, gboolean *fresh);

/**
 * gst_taconite_roi_get_predicted:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @predicted: (out) (optional): TRUE when taconitetrack moved the box to its prediction
 *
 * Returns: TRUE when @roi's "detection" param has a boolean "predicted". Since: 0.6
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_get_predicted(const GstVideoRegionOfInterestMeta *roi,
                                                              gboolean *predicted);

/**
 * gst_taconite_roi_is_predicted:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 *
 * Returns: TRUE when the box was not measured by a detector on this frame: "predicted" TRUE, or
 * "fresh" FALSE (carried, which a tracker should have predicted or removed). Both absent: measured.
 * Since: 0.6
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_is_predicted(const GstVideoRegionOfInterestMeta *roi);

/**
 * gst_taconite_roi_get_track_id:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @track_id: (out) (optional): the tracking id
 *
 * Returns: TRUE when @roi carries an "object_id" param with an integer "id" (int, uint, int64, or a
 * uint64 up to G_MAXINT64), or an integer field "object_id" in another param: what the elements read
 * (gst_taconite_roi_get_track_id_from() with "object_id").
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_get_track_id(const GstVideoRegionOfInterestMeta *roi,
                                                             gint64 *track_id);

/**
 * gst_taconite_roi_get_track_id_from:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @id_param: (nullable): where the id is (taconiteadaface's and taconiteidentify's `track-id-param`)
 * @track_id: (out) (optional): the tracking id
 *
 * The tracking id written under another name: the first param named @id_param with an integer "id"
 * (DL Streamer's "object_id"), or an integer field named @id_param in any param. With @id_param
 * "object_id" this is gst_taconite_roi_get_track_id(). Since: 0.6
 *
 * Returns: TRUE when found; FALSE for a NULL or empty @id_param.
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_get_track_id_from(const GstVideoRegionOfInterestMeta *roi,
                                                                  const gchar *id_param, gint64 *track_id);

/**
 * gst_taconite_roi_get_track_state:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 *
 * Returns: NONE without an "object_id" id, else PREDICTED when gst_taconite_roi_is_predicted(), else
 * TRACKED. Since: 0.6
 */
GST_TACONITE_META_API GstTaconiteTrackState gst_taconite_roi_get_track_state(const GstVideoRegionOfInterestMeta *roi);

/**
 * gst_taconite_roi_get_quality:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @quality: (out) (optional): the face's best-shot quality
 *
 * taconiteadaface's "quality" param: the embedding's "embedding-score" (with AdaFace's norm) when
 * it is a finite number, else this frame's pre-embedding "score". Since: 0.6
 *
 * Returns: TRUE when either is there.
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_get_quality(const GstVideoRegionOfInterestMeta *roi,
                                                            gdouble *quality);

/**
 * gst_taconite_roi_get_quality_field:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @field: (nullable): a "quality" field: "score", "size", "pose", "sharpness", "yaw", "pitch",
 *   "roll" or "embedding-score"
 * @value: (out) (optional): its value
 *
 * Returns: TRUE when @roi's "quality" param has @field as a finite number. Since: 0.6
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_get_quality_field(const GstVideoRegionOfInterestMeta *roi,
                                                                  const gchar *field, gdouble *value);

/**
 * gst_taconite_roi_get_track_uid:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 *
 * The track's uid: taconitetrack gives every track one no other track of any stream, run or machine
 * has (a random UUID), string field "uid" of the "object_id" param beside "id". Key events and
 * records on it; the id restarts with every stream. Since: 0.6
 *
 * Returns: (transfer none) (nullable): the uid, valid while @roi is; NULL when the ROI has none.
 */
GST_TACONITE_META_API const gchar *gst_taconite_roi_get_track_uid(const GstVideoRegionOfInterestMeta *roi);

/**
 * gst_taconite_roi_get_label_state:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 *
 * An "identity" param without "label_state" (an older or foreign writer) is KNOWN when it has a label,
 * UNKNOWN when its label_id is -1; one with a label_state this version does not know is PENDING.
 *
 * Returns: whether the face's name is decided.
 */
GST_TACONITE_META_API GstTaconiteLabelState gst_taconite_roi_get_label_state(const GstVideoRegionOfInterestMeta *roi);

/**
 * gst_taconite_roi_get_label:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 *
 * Returns: (transfer none) (nullable): the decided name ("unknown" when decided unknown), valid
 * while @roi is; NULL while pending or without identification. A foreign writer's label may not be
 * UTF-8 (the setters refuse such labels): check with g_utf8_validate() before showing it.
 */
GST_TACONITE_META_API const gchar *gst_taconite_roi_get_label(const GstVideoRegionOfInterestMeta *roi);

/**
 * gst_taconite_roi_get_label_id:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @label_id: (out) (optional): the gallery identity id (from 1), -1 for unknown
 *
 * Returns: TRUE when @roi carries a decided label id (an integer in gint range).
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_get_label_id(const GstVideoRegionOfInterestMeta *roi,
                                                             gint *label_id);

/**
 * gst_taconite_roi_get_confidence:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @confidence: (out) (optional): the decided identity's mean cosine similarity
 *
 * Returns: TRUE when @roi carries a decided confidence (a finite number).
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_get_confidence(const GstVideoRegionOfInterestMeta *roi,
                                                               gdouble *confidence);

/**
 * gst_taconite_roi_get_landmarks:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @x: (out) (array length=n_points) (transfer full) (optional): x of each point, frame pixels
 * @y: (out) (array length=n_points) (transfer full) (optional): y of each point, frame pixels
 * @n_points: (out): number of points (5 from taconitedetect / taconitelandmarks), 0 when none
 *
 * The face's landmark points in frame pixels, from the first param carrying one of the encodings
 * above (fractions are scaled by the ROI box). At most 1024 points are read; taconiteadaface,
 * taconiteidentify and taconitepublish align a face with 5 (or 2: the eyes) of them.
 *
 * Returns: TRUE when @roi carries readable landmarks (as many x as y, all numbers; NaN and
 * infinities are returned as written and make vision's alignment refuse the points).
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_get_landmarks(const GstVideoRegionOfInterestMeta *roi, gdouble **x,
                                                              gdouble **y, guint *n_points);

/**
 * gst_taconite_roi_get_embedding_meta:
 * @buffer: the #GstBuffer @roi is attached to
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta of @buffer (NULL: none)
 *
 * The face's embedding (see gst_taconite_embedding_meta_get_embedding() for its floats). An
 * embedding is linked to its ROI by the ROI's id: when other ROIs of @buffer share @roi's id (stock
 * facedetect leaves every id at 0) it belongs to no single face and NULL is returned.
 *
 * Returns: (transfer none) (nullable): the #GstTaconiteEmbeddingMeta of @roi, or NULL.
 */
GST_TACONITE_META_API GstTaconiteEmbeddingMeta *gst_taconite_roi_get_embedding_meta(
    GstBuffer *buffer, const GstVideoRegionOfInterestMeta *roi);

/**
 * gst_buffer_get_taconite_rois:
 * @buffer: a #GstBuffer
 *
 * Every #GstVideoRegionOfInterestMeta of @buffer, in the order gst_buffer_iterate_meta() visits
 * them (the binding-friendly way to reach every face). Free the list with g_list_free().
 *
 * Returns: (transfer container) (element-type GstVideo.VideoRegionOfInterestMeta): the ROIs, NULL when none.
 */
GST_TACONITE_META_API GList *gst_buffer_get_taconite_rois(GstBuffer *buffer);

G_END_DECLS

/* gsttaconiteroi: typed reads of what the taconite elements write on a face's
 * GstVideoRegionOfInterestMeta, so no application hard-codes param names or their integer types.
 *
 * Link with pkg-config `gsttaconitemeta-1.0`; from Python use GstTaconite 1.0 (e.g.
 * GstTaconite.roi_get_label(roi)). The params read (docs/gstreamer.md, "Reading the results"):
 *  - "object_id", field "id" (int or int64): the tracking id (taconitetrack, DL Streamer gvatrack), and
 *    "uid" (string): the track's uid (taconitetrack);
 *  - "identity", fields "label_state", "label", "label_id", "confidence": taconiteidentify's answer;
 *  - "landmarks", fields "x" and "y" (arrays or lists of numbers; "normalized" = TRUE: fractions of
 *    the ROI box): taconitedetect's and taconitelandmarks' points.
 * Every function only reads; a NULL or foreign ROI gives the "absent" answer, never a crash.
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
 * gst_taconite_roi_get_track_id:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @track_id: (out) (optional): the tracking id
 *
 * Returns: TRUE when @roi carries an "object_id" param with an int or int64 "id".
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_get_track_id(const GstVideoRegionOfInterestMeta *roi,
                                                             gint64 *track_id);

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
 * while @roi is; NULL while pending or without identification.
 */
GST_TACONITE_META_API const gchar *gst_taconite_roi_get_label(const GstVideoRegionOfInterestMeta *roi);

/**
 * gst_taconite_roi_get_label_id:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @label_id: (out) (optional): the gallery identity id (from 1), -1 for unknown
 *
 * Returns: TRUE when @roi carries a decided label id.
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_get_label_id(const GstVideoRegionOfInterestMeta *roi,
                                                             gint *label_id);

/**
 * gst_taconite_roi_get_confidence:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @confidence: (out) (optional): the decided identity's mean cosine similarity
 *
 * Returns: TRUE when @roi carries a decided confidence.
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
 * The "landmarks" param's points in frame pixels (normalized ones are scaled by the ROI box). At most
 * 1024 points are read.
 *
 * Returns: TRUE when @roi carries readable landmarks (same number of x and y, all numbers).
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_get_landmarks(const GstVideoRegionOfInterestMeta *roi, gdouble **x,
                                                              gdouble **y, guint *n_points);

/**
 * gst_taconite_roi_get_embedding_meta:
 * @buffer: the #GstBuffer @roi is attached to
 * @roi: a #GstVideoRegionOfInterestMeta of @buffer
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

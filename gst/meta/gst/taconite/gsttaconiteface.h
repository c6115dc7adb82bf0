/* gsttaconiteface: typed writes of the face contract on a GstVideoRegionOfInterestMeta, the ones
 * the taconite elements use, so a writer of its own (an application, a test, another detector)
 * produces exactly what the elements and gsttaconiteroi.h's readers expect.
 *
 * The params stay DL Streamer's wire format (names, fields and types as docs/gstreamer.md's "The
 * face contract" lists them), so DL Streamer elements and applications interoperate. Each setter
 * replaces the param it writes (every param of that name goes, the new one is appended). Bad input
 * (a NULL ROI, NaN or infinite numbers, out-of-range values, text that is not UTF-8, too many points)
 * returns FALSE / NULL and changes nothing. The ROI's buffer must be writable.
 *
 * Link with pkg-config `gsttaconitemeta-1.0`; from Python use GstTaconite 1.0
 * (e.g. GstTaconite.roi_set_track_id(roi, 7, "a-uid")).
 */
#pragma once

#include <gst/taconite/gsttaconiteroi.h>

G_BEGIN_DECLS

/**
 * gst_taconite_roi_replace_param:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @param: (transfer full): the new param
 *
 * Removes every param of @roi named like @param, then appends @param (the building block of the
 * setters, for params this API has no typed setter for). Since: 0.6
 *
 * Returns: TRUE when added; FALSE for a NULL @roi (@param is freed).
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_replace_param(GstVideoRegionOfInterestMeta *roi, GstStructure *param);

/**
 * gst_taconite_roi_remove_param:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @name: (nullable): a param name
 *
 * Returns: TRUE when @roi had a param named @name (every one is removed). Since: 0.6
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_remove_param(GstVideoRegionOfInterestMeta *roi, const gchar *name);

/**
 * gst_taconite_points_params_new:
 * @name: the param name ("landmarks", or e.g. "landmarks-68")
 * @x: (array length=n_points): x of each point, frame pixels
 * @y: (array length=n_points): y of each point, frame pixels
 * @n_points: number of points, 1 to 1024
 *
 * Returns: (transfer full) (nullable): a structure @name with "x" and "y" arrays of doubles, or NULL
 * when @n_points is out of range, a value is not finite or @name is not a valid structure name.
 * Since: 0.6
 */
GST_TACONITE_META_API GstStructure *gst_taconite_points_params_new(const gchar *name, const gdouble *x,
                                                                   const gdouble *y, guint n_points);

/**
 * gst_taconite_roi_set_landmarks:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @x: (array length=n_points): x of each point, frame pixels
 * @y: (array length=n_points): y of each point, frame pixels
 * @n_points: number of points, 1 to 1024 (5 in the template's order, see docs/gstreamer.md)
 *
 * Writes the "landmarks" param (encoding 1 of gsttaconiteroi.h, frame pixels). Since: 0.6
 *
 * Returns: TRUE when written.
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_set_landmarks(GstVideoRegionOfInterestMeta *roi, const gdouble *x,
                                                              const gdouble *y, guint n_points);

/**
 * gst_taconite_roi_set_detection:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @confidence: the detector's confidence, a finite number (0..1 from taconitedetect)
 *
 * Writes the "detection" param: "confidence" (double) and "label" "face". Set its freshness with
 * gst_taconite_roi_set_fresh(). Since: 0.6
 *
 * Returns: TRUE when written.
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_set_detection(GstVideoRegionOfInterestMeta *roi, gdouble confidence);

/**
 * gst_taconite_roi_set_fresh:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @fresh: FALSE when the box was carried from an earlier detection
 *
 * Sets the "fresh" boolean of @roi's "detection" param. Since: 0.6
 *
 * Returns: TRUE when set; FALSE without a "detection" param.
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_set_fresh(GstVideoRegionOfInterestMeta *roi, gboolean fresh);

/**
 * gst_taconite_roi_set_predicted:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @predicted: TRUE when a tracker moved the box to its prediction
 *
 * Sets the "predicted" boolean of @roi's "detection" param. Since: 0.6
 *
 * Returns: TRUE when set; FALSE without a "detection" param.
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_set_predicted(GstVideoRegionOfInterestMeta *roi, gboolean predicted);

/**
 * gst_taconite_roi_set_track_id:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @track_id: the tracking id
 * @uid: (nullable): the track's uid (UTF-8, not empty), or NULL for none
 *
 * Writes the "object_id" param: "id" (an int, or an int64 for ids beyond gint, so none wraps) and
 * "uid" (string) when given. Since: 0.6
 *
 * Returns: TRUE when written; FALSE for an empty or non-UTF-8 @uid.
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_set_track_id(GstVideoRegionOfInterestMeta *roi, gint64 track_id,
                                                             const gchar *uid);

/**
 * gst_taconite_roi_set_quality:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @fields: (array length=n_fields): "quality" field names ("score", "size", "pose", "sharpness",
 *   "yaw", "pitch", "roll", "embedding-score")
 * @values: (array length=n_fields): their values, finite numbers
 * @n_fields: number of fields, 1 to 8
 *
 * Writes the "quality" param, the fields as doubles. Since: 0.6
 *
 * Returns: TRUE when written; FALSE for a field outside the list, a repeated one or a value that is not
 * finite.
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_set_quality(GstVideoRegionOfInterestMeta *roi,
                                                            const gchar *const *fields, const gdouble *values,
                                                            guint n_fields);

/**
 * gst_taconite_roi_set_identity:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 * @label: the decided name (UTF-8; taconiteidentify writes "unknown" for an unknown face)
 * @label_id: the gallery identity id (from 1), or -1 for unknown
 * @confidence: the decision's mean cosine similarity, a finite number
 *
 * Writes the decided "identity" param: "label_state" ("known", or "unknown" for @label_id -1),
 * "label", "label_id" (int) and "confidence" (double). Since: 0.6
 *
 * Returns: TRUE when written; FALSE for a NULL or non-UTF-8 @label or a @label_id below 1 other than -1.
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_set_identity(GstVideoRegionOfInterestMeta *roi, const gchar *label,
                                                             gint label_id, gdouble confidence);

/**
 * gst_taconite_roi_set_identity_pending:
 * @roi: (nullable): a #GstVideoRegionOfInterestMeta
 *
 * Writes the "identity" param of a face whose track still votes: "label_state" "pending" only.
 * Since: 0.6
 *
 * Returns: TRUE when written.
 */
GST_TACONITE_META_API gboolean gst_taconite_roi_set_identity_pending(GstVideoRegionOfInterestMeta *roi);

G_END_DECLS

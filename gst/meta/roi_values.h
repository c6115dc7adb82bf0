/* Private to gsttaconitemeta: the value reads every ROI accessor shares (not installed). */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

/* At most this many landmark points are read or written (bounds what a foreign array allocates). */
#define TACONITE_MAX_POINTS 1024

/* The first param of @roi named @name; NULL for a NULL @roi or none. */
G_GNUC_INTERNAL GstStructure *taconite_roi_find_param(const GstVideoRegionOfInterestMeta *roi, const gchar *name);

/* A number of any numeric GType (double, float, int, uint, int64, uint64) in @v, NaN and
 * infinities included. */
G_GNUC_INTERNAL gboolean taconite_value_any_number(const GValue *v, gdouble *out);

/* taconite_value_any_number, finite only. */
G_GNUC_INTERNAL gboolean taconite_value_number(const GValue *v, gdouble *out);

/* An integer of any integer GType in @v that fits a gint64 (a uint64 beyond G_MAXINT64 does not). */
G_GNUC_INTERNAL gboolean taconite_value_integer(const GValue *v, gint64 *out);

/* The string field @field of @s when it holds valid UTF-8; NULL otherwise. */
G_GNUC_INTERNAL const gchar *taconite_structure_utf8(const GstStructure *s, const gchar *field);

G_END_DECLS

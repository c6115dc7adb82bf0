/* gsttaconitetracks: the tracker's word that tracks ended, for every per-track element downstream.
 *
 * taconitetrack decides when a track ends (not seen for `max-age` frames, a scene cut) and sends,
 * before the first buffer in which the tracks are gone, one serialized custom downstream event
 * "taconite-tracks-ended" naming them: fields "ids" (GstValueArray of gint64), "uids" (GstValueArray of
 * strings, "" for a track without one, as long as "ids") and "reason" (string: "lost", "scene-cut",
 * "reset"). Serialized, it stays in order with the buffers through queues, tees and converters, so an
 * element downstream ends each track exactly between its last buffer and the next. Flush, EOS and
 * STREAM_START end every track without this event.
 *
 * Link with pkg-config `gsttaconitemeta-1.0`; from Python use GstTaconite 1.0
 * (GstTaconite.tracks_ended_event_get_size(event), GstTaconite.tracks_ended_event_get_track(event, i)).
 * A NULL, foreign or malformed event gives FALSE / 0, never a crash.
 */
#pragma once

#include <gst/gst.h>
#include <gst/taconite/gsttaconitemeta.h>

G_BEGIN_DECLS

#define GST_TACONITE_TRACKS_ENDED_EVENT_NAME "taconite-tracks-ended"
/* At most this many tracks in one event (a tracker keeps far fewer; bounds what a reader allocates). */
#define GST_TACONITE_TRACKS_ENDED_MAX 4096

/**
 * gst_taconite_tracks_ended_event_new:
 * @ids: (array length=n_tracks): the ended tracks' ids
 * @uids: (array length=n_tracks) (nullable): their uids (NULL, or a NULL entry: none)
 * @n_tracks: number of tracks, 1 to %GST_TACONITE_TRACKS_ENDED_MAX
 * @reason: (nullable): why they ended ("lost", "scene-cut", "reset"); NULL: "lost"
 *
 * Returns: (transfer full) (nullable): a new serialized custom downstream event, or NULL when
 * @n_tracks is out of range or a uid is not valid UTF-8.
 */
GST_TACONITE_META_API GstEvent *gst_taconite_tracks_ended_event_new(const gint64 *ids, const gchar *const *uids,
                                                                   guint n_tracks, const gchar *reason);

/**
 * gst_taconite_event_is_tracks_ended:
 * @event: (nullable): a #GstEvent
 *
 * Returns: TRUE when @event is a well-formed "taconite-tracks-ended" event.
 */
GST_TACONITE_META_API gboolean gst_taconite_event_is_tracks_ended(GstEvent *event);

/**
 * gst_taconite_tracks_ended_event_get_size:
 * @event: (nullable): a #GstEvent
 *
 * Returns: the number of tracks the event names; 0 when it is not a well-formed tracks-ended event.
 */
GST_TACONITE_META_API guint gst_taconite_tracks_ended_event_get_size(GstEvent *event);

/**
 * gst_taconite_tracks_ended_event_get_track:
 * @event: (nullable): a #GstEvent
 * @index: which track, from 0
 * @track_id: (out) (optional): its id
 * @uid: (out) (optional) (transfer none): its uid ("" when none), valid while @event is
 *
 * Returns: TRUE when @event is a well-formed tracks-ended event with a track @index.
 */
GST_TACONITE_META_API gboolean gst_taconite_tracks_ended_event_get_track(GstEvent *event, guint index,
                                                                        gint64 *track_id, const gchar **uid);

/**
 * gst_taconite_tracks_ended_event_get_reason:
 * @event: (nullable): a #GstEvent
 *
 * Returns: (transfer none) (nullable): why the tracks ended, NULL when not a tracks-ended event.
 */
GST_TACONITE_META_API const gchar *gst_taconite_tracks_ended_event_get_reason(GstEvent *event);

G_END_DECLS

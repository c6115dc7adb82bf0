/**
 * SECTION:element-taconitetrack
 * @title: taconitetrack
 *
 * Gives every #GstVideoRegionOfInterestMeta of type `roi-type` (default `face`; empty: every type)
 * a tracking id that stays the same from frame to frame while the object moves, written as DL
 * Streamer does: a ROI param structure `object_id` with an integer field `id`, where
 * taconiteadaface's `track-id-param` reads it by default (so `reinfer-interval` and `track-best`
 * reuse embeddings per face).
 *
 * Each track's box is predicted by a constant-velocity Kalman filter (OpenCV) on its centre and
 * size and matched to the frame's boxes with an optimal assignment (dlib) in two passes, as
 * ByteTrack does: boxes whose `detection` param's `confidence` (1 when absent) is at least
 * `track-threshold` against every track, then boxes down to `low-threshold` against the tracks
 * still unmatched that were matched in the previous frame (such weak boxes never start tracks).
 * A motion gate from the filter's covariance (squared Mahalanobis distance under H P H^T + R at
 * most 9.4877, the chi-square 95 % quantile for 4 dof) rules pairs out; inside it a pair needs an
 * overlap (IoU) of `iou-threshold`, except for a lost track, whose growing covariance lets a face
 * that comes back near its predicted place take its id back. An unmatched strong box starts a
 * track; its id is published once the track was matched in `min-hits` consecutive frames (before
 * that its ROI gets no `object_id`, and a missed frame ends it, so flickering false detections are
 * never confirmed). A confirmed track missing from more than `max-age` consecutive frames ends, so
 * a face that comes back sooner gets its id back.
 *
 * Between detections (taconitedetect `interval` > 1; like DL Streamer's gvatrack
 * `tracking-type=short-term-imageless`): a ROI whose `detection` param has `fresh` FALSE is the
 * detector's carried box, not a measurement. It is given to the track it was last measured as,
 * and rewritten with that track's prediction for this frame: the predicted box (clipped to the
 * frame), its landmarks moved with the box, `predicted` TRUE in its `detection` param, and the
 * track's id. No track counts a miss on such a frame. A carried ROI that no track claims, whose
 * prediction has left the frame (less than a pixel inside), that lies outside the frame or is
 * beyond `max-rois` is removed from the buffer: every carried ROI that passes on is predicted,
 * none is passed on as a measurement. Downstream, taconiteadaface aligns the face at the moved
 * landmarks and reuses embeddings per id; taconiteidentify votes per id.
 *
 * At a hard scene cut (edited video, a PTZ camera jumping to a preset) every track ends, so no id
 * continues from a face before the cut onto another after it (ids go on counting). A cut is a
 * frame whose change from the previous one exceeds `scene-cut-threshold`: the smaller of the
 * distance of their coarse luma histograms (per quadrant) and one minus the correlation of their luma
 * thumbnails (at most 64x36 cells of 4x4 samples, vision/scene_cut.hpp), so camera noise, motion,
 * pans, zooms and light changes stay below it. The frame is mapped read-only for this (system
 * memory of the formats taconitedetect takes, and GRAY8; other caps are tracked without cuts);
 * each cut is logged at DEBUG level.
 *
 * Ids count up from 1 and are never reused within a stream (beyond G_MAXINT they are written as
 * 64-bit integers). Every confirmed track also gets a uid, a random UUID no track of any run or
 * machine has, written as the string field `uid` of `object_id` beside `id`.
 *
 * This element decides when a track ends, and says so: before the buffer of the frame in which
 * confirmed tracks are gone it pushes one serialized custom downstream event
 * "taconite-tracks-ended" (gsttaconitetracks.h) naming their ids and uids, with the reason "lost"
 * (missed for more than `max-age` frames, or dropped to keep `max-rois` tracks), "scene-cut" or
 * "reset" (a caps change of the frame size) or "camera-lost" (taconitecamera's
 * "taconite-camera-lost" event: its camera went away; that event passes on behind it, and new
 * tracks start when frames are back). A track never confirmed is never named; a flush, EOS and
 * STREAM_START send none (every element downstream ends all its tracks on those).
 * taconiteadaface, taconiteidentify and taconitepublish end a track on it and never time out a
 * track whose ROIs carry a uid.
 * At most `max-rois` ROIs of a frame are tracked (the largest), and at most as many tracks kept.
 * An `object_id` param already on a ROI of that type is replaced or, without an id, removed.
 *
 * Buffers pass through in place and are never dropped; one whose ROIs get no change is passed on
 * untouched, and one that is not writable is copied (metadata only, never the pixels) when ids are
 * written. FLUSH_STOP and a caps change of the frame size forget the tracks (ids go on counting);
 * STREAM_START starts a new stream (ids from 1 again).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! facedetect display=false ! taconitetrack ! \
 *     taconiteadaface bundle=/path/to/bundle reinfer-interval=5 ! videoconvert ! autovideosink
 * ]| Tracks the faces facedetect finds and embeds each face every 5 frames, reusing its embedding
 * in between.
 *
 * Since: 0.2
 */
#include "gsttaconitetrack.h"

#include <gst/video/video.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <gst/taconite/gsttaconitecamera.h>
#include <gst/taconite/gsttaconitetracks.h>

#include "box_tracker.hpp"
#include "cxx_boundary.hpp"
#include "face_selection.hpp"
#include "frame_view.hpp"
#include "property_table.hpp"
#include "readable_frame.hpp"
#include "roi_detection.hpp"
#include "roi_track_param.hpp"
#include "scene_cut.hpp"
#include "track_uid.hpp"

GST_DEBUG_CATEGORY_STATIC(taconite_track_debug);
#define GST_CAT_DEFAULT taconite_track_debug

namespace {

using namespace taconite::gst;
using taconite::vision::Box;
using taconite::vision::BoxTracker;
using taconite::vision::Detection;
using taconite::vision::SceneCutDetector;
using taconite::vision::SceneCutResult;
using taconite::vision::TrackerPolicy;
using taconite::vision::TrackResult;

// Bounds the assignment matrix (max-rois squared) and its cubic solve.
constexpr guint kMaxMaxRois = 1024;

// Property values and their defaults (see declare_properties()); guarded by the object lock.
struct Settings {
  std::string roi_type = "face";
  double iou_threshold = 0.3;
  guint max_age = 30;
  guint min_hits = 3;
  guint max_rois = 256;
  double track_threshold = 0.5;
  double low_threshold = 0.1;
  // Between the real Hamilton clip's cuts (scores 0.24 to 0.48) and its highest score within a
  // shot (0.08): see docs/gstreamer.md.
  double scene_cut_threshold = 0.15;
};

// What a ROI of the buffer gets: its id param set to `id`, or removed when `id` is empty.
// A stale ROI claimed by a track also moves from `measured` (its box as the tracker saw it) to
// the track's `predicted` box; one the tracker cannot predict is removed (`drop`).
struct RoiChange {
  bool write = false;
  bool drop = false;
  std::optional<gint64> id;
  std::string uid;  // the track's, with `id`
  std::optional<Box> measured, predicted;
};

// Confirmed tracks that ended, for one tracks-ended event.
struct EndedTracks {
  const char* reason;  // "lost", "scene-cut", "reset", "camera-lost"
  std::vector<gint64> ids;
  std::vector<std::string> uids;
};

// What only the streaming thread touches (buffers, serialized events, caps).
struct Stream {
  BoxTracker tracker;
  std::unordered_map<gint64, std::string> uids;  // of the live confirmed tracks
  std::vector<EndedTracks> ended;                 // announced before the next buffer goes out
  GstVideoInfo info;
  bool have_info = false;
  std::vector<RoiChange> changes;  // per ROI meta of the buffer being processed, in meta order
  bool warned_exhausted = false;
  SceneCutDetector cuts;
  bool cuts_readable = false;  // the caps are system-memory video of a format vision/ reads
  bool warned_unreadable = false;
};

// The ROI's box clipped to the frame; empty (zero width or height) when nothing of it is inside.
Box clipped_box(const GstVideoRegionOfInterestMeta* roi, const GstVideoInfo& info) {
  const PixelBox inside = clipped_roi_box(*roi, info);
  return {static_cast<double>(inside.x), static_cast<double>(inside.y), static_cast<double>(inside.width),
          static_cast<double>(inside.height)};
}

// The uid of confirmed track `id`, made when the track is first given out.
const std::string& track_uid(Stream& stream, gint64 id) {
  auto [it, added] = stream.uids.try_emplace(id);
  if (added) it->second = new_track_uid();
  return it->second;
}

// Takes the tracks the tracker ended, for the event sent before the next buffer; a frame's ends
// of one reason go in one event.
void collect_ended(Stream& stream, const char* reason) {
  const std::vector<std::int64_t> ids = stream.tracker.take_ended();
  if (ids.empty()) return;
  if (stream.ended.empty() || std::string(stream.ended.back().reason) != reason)
    stream.ended.push_back({reason, {}, {}});
  EndedTracks& out = stream.ended.back();
  for (std::int64_t id : ids) {
    auto it = stream.uids.find(id);
    out.ids.push_back(id);
    out.uids.push_back(it == stream.uids.end() ? std::string() : std::move(it->second));
    if (it != stream.uids.end()) stream.uids.erase(it);
  }
}

// Forgets every track without announcing them (flush and a new stream end all tracks downstream).
void forget_ended(Stream& stream) {
  stream.tracker.take_ended();
  stream.uids.clear();
  stream.ended.clear();
}

// Whether `caps` carry frames this element can read for scene cuts: in system memory (mapping
// GPU or DMA memory would copy every frame) and of a format vision/ reads.
bool cuts_readable(const GstCaps* caps, const GstVideoInfo& info) {
  const GstCapsFeatures* features = gst_caps_get_features(caps, 0);
  if (features && !gst_caps_features_is_any(features) &&
      !gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY))
    return false;
  return pixel_format(GST_VIDEO_INFO_FORMAT(&info)).has_value();
}

}  // namespace

struct _GstTaconiteTrack {
  GstBaseTransform parent;
  Settings* settings;
  Stream* stream;
};


static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw(ANY)"));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw(ANY)"));

G_DEFINE_TYPE_WITH_CODE(GstTaconiteTrack, gst_taconite_track, GST_TYPE_BASE_TRANSFORM,
                        GST_DEBUG_CATEGORY_INIT(taconite_track_debug, "taconitetrack", 0, "taconitetrack element"));
GST_ELEMENT_REGISTER_DEFINE(taconitetrack, "taconitetrack", GST_RANK_NONE, GST_TYPE_TACONITE_TRACK);

/* ------------------------------------------------------------------------------------------ */
/* Streaming                                                                                   */

// Ends every track when `input` starts a new shot. Reads the frame read-only (the buffer is not
// copied); a frame that cannot be read is passed on uncompared, with one warning per stream.
static void end_tracks_at_scene_cut(GstTaconiteTrack* self, GstBuffer* input, double threshold) {
  Stream& stream = *self->stream;
  if (threshold <= 0.0 || !stream.cuts_readable) return;
  ReadableFrame frame;
  std::string problem;
  SceneCutResult result;
  if (const taconite::Status mapped = frame.map(stream.info, input); mapped) {
    result = stream.cuts.update(frame.view(), threshold);
    problem = result.problem;
  } else {
    problem = mapped.error().message;
  }
  if (!problem.empty()) {
    if (!stream.warned_unreadable)
      GST_ELEMENT_WARNING(self, STREAM, FAILED, ("A video buffer does not hold the frame it describes."),
                          ("%s: its ROIs are tracked, scene cuts are not looked for in such frames.", problem.c_str()));
    stream.warned_unreadable = true;
    return;
  }
  GST_TRACE_OBJECT(self, "scene change %.3f (appearance %.3f, structure %.3f)", result.score, result.appearance,
                   result.structure);
  if (!result.cut) return;
  GST_DEBUG_OBJECT(self, "scene cut at %" GST_TIME_FORMAT " (score %.3f > scene-cut-threshold %.3f; appearance %.3f, "
                   "structure %.3f): %zu tracks ended",
                   GST_TIME_ARGS(GST_BUFFER_PTS(input)), result.score, threshold, result.appearance,
                   result.structure, stream.tracker.size());
  stream.tracker.clear_tracks();
  collect_ended(stream, "scene-cut");
}

// Sends the tracks that ended downstream, ahead of the buffer in which they are gone: serialized,
// the event keeps its place between the buffers through queues and tees.
static void announce_ended(GstTaconiteTrack* self) {
  Stream& stream = *self->stream;
  for (const EndedTracks& ended : stream.ended) {
    for (std::size_t first = 0; first < ended.ids.size(); first += GST_TACONITE_TRACKS_ENDED_MAX) {
      const std::size_t n = std::min<std::size_t>(ended.ids.size() - first, GST_TACONITE_TRACKS_ENDED_MAX);
      std::vector<const gchar*> uids(n);
      for (std::size_t k = 0; k < n; ++k) uids[k] = ended.uids[first + k].c_str();
      GstEvent* event = gst_taconite_tracks_ended_event_new(ended.ids.data() + first, uids.data(),
                                                            static_cast<guint>(n), ended.reason);
      GST_DEBUG_OBJECT(self, "%zu tracks ended (%s), first id %" G_GINT64_FORMAT, n, ended.reason,
                       ended.ids[first]);
      // As a queue does, the result does not stop the stream (a flushing peer refuses it).
      if (event) gst_pad_push_event(GST_BASE_TRANSFORM_SRC_PAD(self), event);
    }
  }
  stream.ended.clear();
}

// Tracks the frame's ROIs and decides what each gets; the buffer is made writable (a metadata
// copy) only when a ROI's params change.
static GstFlowReturn prepare_output_buffer_unguarded(GstTaconiteTrack* self, GstBuffer* input, GstBuffer** output) {
  Stream& stream = *self->stream;
  TrackerPolicy policy;
  GST_OBJECT_LOCK(self);
  const Settings& s = *self->settings;
  const GQuark roi_type = s.roi_type.empty() ? 0 : g_quark_from_string(s.roi_type.c_str());
  policy.iou_threshold = s.iou_threshold;
  policy.max_age = s.max_age;
  policy.min_hits = s.min_hits;
  policy.max_tracks = s.max_rois;
  policy.track_threshold = s.track_threshold;
  policy.low_threshold = s.low_threshold;
  const double scene_cut_threshold = s.scene_cut_threshold;
  GST_OBJECT_UNLOCK(self);

  end_tracks_at_scene_cut(self, input, scene_cut_threshold);

  const std::vector<GstVideoRegionOfInterestMeta*> rois = buffer_rois(input);
  stream.changes.assign(rois.size(), RoiChange{});
  struct Candidate {
    std::size_t index;
    Detection detection;
  };
  std::vector<Candidate> candidates;
  bool write = false;
  for (std::size_t i = 0; i < rois.size(); ++i) {
    if (roi_type && rois[i]->roi_type != roi_type) continue;  // not ours: untouched
    // Every ROI of the type loses a stale id unless it gets one of ours below.
    stream.changes[i].write = has_roi_track_id_param(rois[i]);
    write = write || stream.changes[i].write;
    const Box box = clipped_box(rois[i], stream.info);
    const Detection detection = roi_detection(rois[i], box);
    if (box.width > 0 && box.height > 0) {
      candidates.push_back({i, detection});
    } else {
      GST_LOG_OBJECT(self, "ROI %u,%u %ux%u has nothing inside the frame: %s", rois[i]->x, rois[i]->y, rois[i]->w,
                     rois[i]->h, detection.fresh ? "no id" : "carried, removed");
      if (!detection.fresh) write = stream.changes[i].drop = true;
    }
  }
  if (candidates.size() > policy.max_tracks) {
    GST_DEBUG_OBJECT(self, "%zu ROIs, max-rois=%zu: the %zu smallest pass without an id (carried ones are removed)",
                     candidates.size(), policy.max_tracks, candidates.size() - policy.max_tracks);
    std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return a.detection.box.width * a.detection.box.height > b.detection.box.width * b.detection.box.height;
    });
    for (std::size_t k = policy.max_tracks; k < candidates.size(); ++k)
      if (!candidates[k].detection.fresh) write = stream.changes[candidates[k].index].drop = true;
    candidates.resize(policy.max_tracks);
  }

  std::vector<Detection> detections(candidates.size());
  std::transform(candidates.begin(), candidates.end(), detections.begin(),
                 [](const Candidate& c) { return c.detection; });
  const Box frame{0.0, 0.0, static_cast<double>(GST_VIDEO_INFO_WIDTH(&stream.info)),
                  static_cast<double>(GST_VIDEO_INFO_HEIGHT(&stream.info))};
  const std::vector<TrackResult> results = stream.tracker.update(detections, policy, frame);
  collect_ended(stream, "lost");
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    RoiChange& change = stream.changes[candidates[k].index];
    if (results[k].drop) {
      write = change.drop = true;
      continue;
    }
    change.id = results[k].id;
    if (change.id) change.uid = track_uid(stream, *change.id);
    if (results[k].predicted) {
      change.measured = detections[k].box;
      change.predicted = results[k].predicted;
    }
    change.write = change.write || change.id.has_value() || change.predicted.has_value();
    write = write || change.write;
  }
  if (stream.tracker.ids_exhausted() && !stream.warned_exhausted) {
    stream.warned_exhausted = true;
    GST_ELEMENT_WARNING(self, STREAM, FAILED, ("Every tracking id of this stream was given out."),
                        ("New tracks get no id until the next STREAM_START."));
  }

  if (!write) stream.changes.clear();
  announce_ended(self);
  *output = write && !gst_buffer_is_writable(input) ? gst_buffer_copy(input) : input;
  return GST_FLOW_OK;
}

// OpenCV (Kalman filters), dlib (the assignment) and allocations throw; no exception may cross
// into GStreamer's C code.
static GstFlowReturn prepare_output_buffer(GstBaseTransform* trans, GstBuffer* input, GstBuffer** output) {
  GstTaconiteTrack* self = GST_TACONITE_TRACK(trans);
  return flow_guarded(GST_ELEMENT(self), "Could not track the regions of interest of a video buffer.", [&] {
    return prepare_output_buffer_unguarded(self, input, output);
  });
}

static GstFlowReturn transform_ip_unguarded(GstTaconiteTrack* self, GstBuffer* buffer) {
  std::vector<RoiChange>& changes = self->stream->changes;
  if (changes.empty()) return GST_FLOW_OK;
  const std::vector<GstVideoRegionOfInterestMeta*> rois = buffer_rois(buffer);
  if (rois.size() != changes.size()) {  // a copy keeps the metas and their order: never expected
    GST_WARNING_OBJECT(self, "buffer has %zu ROIs, %zu were tracked: ids not written", rois.size(), changes.size());
  } else {
    for (std::size_t i = 0; i < rois.size(); ++i) {
      // The tracker dropped the prediction of a box outside the frame: a move never fails, but
      // were it to, the carried box goes rather than pass on unmoved and unflagged.
      if (!changes[i].drop && changes[i].predicted &&
          !move_roi_to_prediction(rois[i], *changes[i].measured, *changes[i].predicted, self->stream->info))
        changes[i].drop = true;
      if (changes[i].drop) {
        GST_LOG_OBJECT(self, "carried ROI %u,%u %ux%u not predicted inside the frame: removed", rois[i]->x,
                       rois[i]->y, rois[i]->w, rois[i]->h);
        gst_buffer_remove_meta(buffer, &rois[i]->meta);
      } else if (changes[i].write) {
        set_roi_track_id(rois[i], changes[i].id, changes[i].uid);
      }
    }
  }
  changes.clear();
  return GST_FLOW_OK;
}

static GstFlowReturn transform_ip(GstBaseTransform* trans, GstBuffer* buffer) {
  GstTaconiteTrack* self = GST_TACONITE_TRACK(trans);
  return flow_guarded(GST_ELEMENT(self), "Could not write the tracking ids of a video buffer.",
                      [&] { return transform_ip_unguarded(self, buffer); });
}

static gboolean set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps* /*outcaps*/) {
  GstTaconiteTrack* self = GST_TACONITE_TRACK(trans);
  return bool_guarded(GST_ELEMENT(self), "taconitetrack could not take the caps.", [&]() -> bool {
    Stream& stream = *self->stream;
    GstVideoInfo info;
    if (!gst_video_info_from_caps(&info, incaps)) {
      GST_ERROR_OBJECT(self, "caps %" GST_PTR_FORMAT " are not raw video caps with a size and format",
                       static_cast<gpointer>(incaps));
      return FALSE;
    }
    if (stream.have_info && (GST_VIDEO_INFO_WIDTH(&info) != GST_VIDEO_INFO_WIDTH(&stream.info) ||
                             GST_VIDEO_INFO_HEIGHT(&info) != GST_VIDEO_INFO_HEIGHT(&stream.info))) {
      GST_DEBUG_OBJECT(self, "frame size changed to %dx%d: tracks forgotten", GST_VIDEO_INFO_WIDTH(&info),
                       GST_VIDEO_INFO_HEIGHT(&info));
      stream.tracker.clear_tracks();  // boxes of another size are not comparable
      collect_ended(stream, "reset");  // announced before the first frame of the new size
    }
    if (!stream.have_info || !gst_video_info_is_equal(&info, &stream.info)) stream.cuts.reset();
    stream.cuts_readable = cuts_readable(incaps, info);
    if (!stream.cuts_readable)
      GST_INFO_OBJECT(self, "caps %" GST_PTR_FORMAT " are not frames in memory of a format read for scene cuts: "
                      "tracks do not end at cuts", static_cast<gpointer>(incaps));
    stream.info = info;
    stream.have_info = true;
    return TRUE;
  });
}

static gboolean sink_event(GstBaseTransform* trans, GstEvent* event) {
  GstTaconiteTrack* self = GST_TACONITE_TRACK(trans);
  return bool_guarded(GST_ELEMENT(self), "taconitetrack could not handle an event.", [&]() -> bool {
    switch (GST_EVENT_TYPE(event)) {
      case GST_EVENT_FLUSH_STOP:  // a seek within the stream: forget where objects were, keep counting ids
        self->stream->tracker.clear_tracks();
        forget_ended(*self->stream);  // every element downstream ends all tracks at a flush
        self->stream->cuts.reset();   // the next frame is no continuation of the last
        break;
      case GST_EVENT_CUSTOM_DOWNSTREAM:
        // taconitecamera lost its camera: every open track ends now (the faces may be anywhere
        // when frames are back), announced ahead of the event; ids go on counting.
        if (gst_taconite_event_is_camera_lost(event)) {
          GST_DEBUG_OBJECT(self, "camera '%s' lost (%s): %zu tracks end",
                           gst_taconite_camera_lost_event_get_stream(event),
                           gst_taconite_camera_lost_event_get_reason(event), self->stream->tracker.size());
          self->stream->tracker.clear_tracks();
          collect_ended(*self->stream, "camera-lost");
          announce_ended(self);
          self->stream->cuts.reset();
        }
        break;
      case GST_EVENT_STREAM_START:
        self->stream->tracker.restart();
        forget_ended(*self->stream);
        self->stream->cuts.reset();
        self->stream->warned_exhausted = false;
        self->stream->warned_unreadable = false;
        break;
      default: break;
    }
    return GST_BASE_TRANSFORM_CLASS(gst_taconite_track_parent_class)->sink_event(trans, event);
  });
}

static gboolean stop(GstBaseTransform* trans) {
  GstTaconiteTrack* self = GST_TACONITE_TRACK(trans);
  return bool_guarded(GST_ELEMENT(self), "Could not stop taconitetrack.", [&] {
    auto fresh = std::make_unique<Stream>();  // may throw: the old stream stays until it is made
    delete self->stream;
    self->stream = fresh.release();
    return true;
  });
}

/* ------------------------------------------------------------------------------------------ */
/* GObject                                                                                     */

// Every property, declared once; defaults are Settings{}'s. All apply from the next buffer.
static void declare_properties(PropertyTable<GstTaconiteTrack, Settings>& t) {
  constexpr Mutable any_time = Mutable::AnyTime;
  t.string("roi-type", "ROI type",
           "roi_type of the GstVideoRegionOfInterestMeta to track (facedetect emits \"face\"); an "
           "empty string tracks every ROI, all types together. Default: \"face\"",
           &Settings::roi_type, any_time);
  t.real("iou-threshold", "IoU threshold",
         "Least overlap (intersection over union, 0 to 1) between a track's predicted box and a "
         "ROI for the ROI to continue the track; lower pairs start a new track. Default: 0.3",
         0.0, 1.0, &Settings::iou_threshold, any_time);
  t.uint("max-age", "Maximum age",
         "Frames a lost confirmed track survives: a face missing from at most this many consecutive "
         "frames gets its id back, one missing longer a new id (a track not yet confirmed ends at "
         "its first missed frame). Default: 30",
         0, G_MAXUINT, &Settings::max_age, any_time);
  t.uint("min-hits", "Minimum hits",
         "Consecutive frames a track must be matched in before its id is published (ROIs of a newer "
         "track get no id); 1 publishes from the first frame. Default: 3",
         1, G_MAXUINT, &Settings::min_hits, any_time);
  t.uint("max-rois", "Maximum ROIs",
         "ROIs of a frame tracked at most, the largest ones (the rest pass without an id), and "
         "tracks kept at most (a new one replaces the longest-lost). Default: 256",
         1, kMaxMaxRois, &Settings::max_rois, any_time);
  t.real("track-threshold", "Track threshold",
         "Least detection confidence (the detection param's confidence; ROIs without one count as "
         "1) for a ROI to be matched in the first pass and to start a track. 0 treats every ROI "
         "so. Default: 0.5",
         0.0, 1.0, &Settings::track_threshold, any_time);
  t.real("low-threshold", "Low threshold",
         "Least detection confidence for a ROI below track-threshold to continue a track matched "
         "in the previous frame (second pass; it never starts one); less confident ROIs get no "
         "id. Default: 0.1",
         0.0, 1.0, &Settings::low_threshold, any_time);
  t.real("scene-cut-threshold", "Scene cut threshold",
         "Change between consecutive frames (0 to 1: the smaller of their luma histograms' and "
         "their thumbnails' distances) above which a frame is a hard cut, where every track ends "
         "so faces after it get new ids; 0 never ends tracks at cuts (and never reads pixels). "
         "Default: 0.15",
         0.0, 1.0, &Settings::scene_cut_threshold, any_time);
}

static void finalize(GObject* object) {
  GstTaconiteTrack* self = GST_TACONITE_TRACK(object);
  delete self->settings;
  delete self->stream;
  G_OBJECT_CLASS(gst_taconite_track_parent_class)->finalize(object);
}

static void gst_taconite_track_init(GstTaconiteTrack* self) {
  self->settings = new Settings();
  self->stream = new Stream();
  // Not passthrough: prepare_output_buffer decides per buffer whether it must become writable.
  gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), TRUE);
}

static void gst_taconite_track_class_init(GstTaconiteTrackClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass* transform_class = GST_BASE_TRANSFORM_CLASS(klass);
  gobject_class->finalize = finalize;
  transform_class->prepare_output_buffer = GST_DEBUG_FUNCPTR(prepare_output_buffer);
  transform_class->transform_ip = GST_DEBUG_FUNCPTR(transform_ip);
  transform_class->set_caps = GST_DEBUG_FUNCPTR(set_caps);
  transform_class->sink_event = GST_DEBUG_FUNCPTR(sink_event);
  transform_class->stop = GST_DEBUG_FUNCPTR(stop);

  PropertyTable<GstTaconiteTrack, Settings>::install(gobject_class, &GstTaconiteTrack::settings, declare_properties);

  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "ROI tracker", "Filter/Analyzer/Video",
      "Gives the regions of interest of a video stream stable tracking ids (ROI param object_id) by Kalman-predicted "
      "matching (two passes by detection confidence, a motion gate), predicting boxes between detections",
      "taconite-adaface maintainers");
}

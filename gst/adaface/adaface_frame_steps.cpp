// taconiteadaface: one buffer's faces embedded, as named steps of one job each that
// embed_frame_faces() runs in order (settings, faces, skip, cache reuse, network inputs, engine,
// embeddings kept, outputs, frame accounting).
#include <gst/taconite/gsttaconiteroi.h>
#include <gst/video/video.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "adaface_element.hpp"
#include "debug_categories.hpp"
#include "embedding_output.hpp"
#include "face_crop.hpp"
#include "face_selection.hpp"
#include "readable_frame.hpp"
#include "roi_landmarks.hpp"
#include "roi_track_param.hpp"
#include "tracks_ended.hpp"

#define GST_CAT_DEFAULT taconite_adaface_debug

namespace taconite::gst::adaface {

namespace {

// What one buffer's work reads of the settings, taken under the object lock once.
struct FrameSettings {
  SelectionRules rules;
  double margin = 0.0;
  ChannelOrder order = ChannelOrder::Rgb;
  gboolean post_messages = FALSE;
  guint interval = 1;
  guint max_embeddings = 0;
  TrackPolicy tracks;
  UntrackedFaces untracked = UntrackedFaces::EveryFrame;
};

// One buffer's faces on their way through the engine; each step reads and fills its part.
struct FrameWork {
  GstTaconiteAdaface* self = nullptr;
  const EngineInfo* engine = nullptr;
  FrameSettings settings;
  std::shared_ptr<AsyncEmbedder> async;  // async-tracks: tracked faces go to the background embedder
  guint64 now = 0;     // this buffer's frame index
  bool due = false;    // `interval` selects this frame
  bool skip = false;   // its faces are only flagged skipped
  taconite::vision::PixelNormalisation norm;
  std::vector<FaceJob> jobs;
  std::vector<FaceEmbedding> faces;             // one per job
  std::vector<std::optional<gint64>> ids;       // the jobs' track ids
  std::vector<bool> predicted;                  // the job's box was guessed by a tracker
  std::vector<std::size_t> prepared;            // faces whose network input is prepared, in scratch order
  std::vector<std::size_t> todo;                // positions in `prepared` of the faces the engine embeds
  std::size_t face_size = 0;                    // floats of one network input
};

FrameSettings read_settings(GstTaconiteAdaface* self) {
  FrameSettings f;
  GST_OBJECT_LOCK(self);
  const Settings& s = *self->settings;
  f.rules.mode = s.input_mode;
  f.rules.roi_type = g_quark_from_string(s.roi_type.c_str());
  f.rules.min_face_size = s.min_face_size;
  f.rules.max_faces = s.max_faces;
  f.margin = s.margin;
  f.order = s.channel_order;
  f.post_messages = s.post_messages;
  f.interval = s.interval;
  f.max_embeddings = s.max_embeddings;
  f.tracks = s.tracks;
  f.untracked = s.untracked;
  GST_OBJECT_UNLOCK(self);
  return f;
}

// True when downstream QoS says this buffer is already late (leaky=skip reacts to it).
bool late_per_qos(GstTaconiteAdaface* self, GstBuffer* buffer) {
  const GstClockTime earliest = self->counters->qos_earliest.load();
  const GstClockTime pts = GST_BUFFER_PTS(buffer);
  if (!GST_CLOCK_TIME_IS_VALID(earliest) || !GST_CLOCK_TIME_IS_VALID(pts) || self->stream->segment.format != GST_FORMAT_TIME)
    return false;
  const GstClockTime running_time = gst_segment_to_running_time(&self->stream->segment, GST_FORMAT_TIME, pts);
  return GST_CLOCK_TIME_IS_VALID(running_time) && running_time <= earliest;
}

// A QoS message for a frame passed on without embeddings, with processed/dropped totals.
void post_skip_qos(GstTaconiteAdaface* self, GstBuffer* buffer) {
  const GstSegment& segment = self->stream->segment;
  const GstClockTime pts = GST_BUFFER_PTS(buffer);
  GstClockTime running_time = GST_CLOCK_TIME_NONE, stream_time = GST_CLOCK_TIME_NONE;
  if (segment.format == GST_FORMAT_TIME && GST_CLOCK_TIME_IS_VALID(pts)) {
    running_time = gst_segment_to_running_time(&segment, GST_FORMAT_TIME, pts);
    stream_time = gst_segment_to_stream_time(&segment, GST_FORMAT_TIME, pts);
  }
  GstMessage* msg = gst_message_new_qos(GST_OBJECT(self), FALSE, running_time, stream_time, pts,
                                        GST_BUFFER_DURATION(buffer));
  gst_message_set_qos_stats(msg, GST_FORMAT_BUFFERS, self->counters->frames_embedded.load(),
                            self->counters->frames_skipped.load());
  gst_element_post_message(GST_ELEMENT(self), msg);
}

// The frame's settings, index, whether it is due and skipped, and the model's normalisation.
FrameWork start_frame(GstTaconiteAdaface* self, const EngineInfo& engine, GstBuffer* buffer, bool skip) {
  FrameWork w;
  w.self = self;
  w.engine = &engine;
  w.settings = read_settings(self);
  w.async = self->engine->async();
  w.now = self->stream->frame_index++;
  w.due = w.now % w.settings.interval == 0;
  w.skip = skip || (self->queue->leaky_skip() && late_per_qos(self, buffer));
  // An explicit channel-order replaces only the model's plane order.
  w.norm = taconite::vision::normalisation_of(engine.preprocessing);
  if (w.settings.order != ChannelOrder::Auto) w.norm.order = w.settings.order;
  return w;
}

// The faces' track ids (messages report them; reuse needs them); faces without a usable one that
// `untracked` says not to embed are left out: no embedding, no meta, not counted. A whole-buffer
// face (crops) always stays.
void leave_out_untracked(FrameWork& w) {
  w.ids = frame_track_ids(w.jobs, w.settings.tracks.id_param);
  if (w.settings.untracked == UntrackedFaces::EveryFrame) return;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const bool left_out = !w.ids[i] && !w.jobs[i].whole_buffer &&
                          (w.settings.untracked == UntrackedFaces::Never || gst_taconite_roi_is_predicted(w.jobs[i].roi));
    if (left_out) continue;
    w.jobs[kept] = w.jobs[i];
    w.ids[kept++] = w.ids[i];
  }
  w.jobs.resize(kept);
  w.ids.resize(kept);
}

// Faces are chosen on the buffer as it came; only a buffer that gets metas is made writable (a
// shared one is copied then), and the faces then point at the writable buffer's ROIs.
void select_frame_faces(FrameWork& w, GstBuffer*& buffer) {
  if (!w.due) return;
  w.jobs = select_faces(buffer, w.self->stream->info, w.settings.rules);
  leave_out_untracked(w);
  if (w.jobs.empty()) return;
  buffer = gst_buffer_make_writable(buffer);
  claim_face_rois(buffer, w.jobs, w.settings.rules.roi_type);
}

// A skipped frame: every face is passed on flagged skipped, without an embedding, and QoS is told.
void pass_faces_skipped(FrameWork& w, GstBuffer* buffer) {
  for (const FaceJob& job : w.jobs) {
    FaceEmbedding face;
    face.face = job;
    face.aligned = false;
    face.status = GST_TACONITE_EMBEDDING_SKIPPED;
    w.faces.push_back(std::move(face));
  }
  attach_embeddings(buffer, w.faces, *w.engine);
  w.self->counters->faces_skipped += w.faces.size();
  ++w.self->counters->frames_skipped;
  GST_CAT_LOG_OBJECT(taconite_dataflow_debug, w.self, "skipped %zu faces of %" GST_PTR_FORMAT, w.faces.size(),
                     static_cast<gpointer>(buffer));
  post_skip_qos(w.self, buffer);
}

// The track's cached embedding on `face`; the first frame to carry one the background embedder
// computed gives it as computed (new evidence for taconiteidentify's votes), later ones as cached.
void attach_cached(FrameWork& w, FaceEmbedding& face, const CachedEmbedding& cached) {
  face.unit = cached.unit;
  face.norm = cached.norm;
  face.aligned = cached.aligned;
  const bool fresh = face.track_id && w.self->stream->async.fresh.erase(*face.track_id) > 0;
  face.status = fresh ? GST_TACONITE_EMBEDDING_COMPUTED : GST_TACONITE_EMBEDDING_CACHED;
  face.cache_age = static_cast<guint>(w.now - cached.embedded_at);
  face.embedding_quality = cached.quality;
}

// A face whose embedding is not computed on this frame: its track's cached one, else skipped.
void attach_cached_or_skip(FrameWork& w, FaceEmbedding& face) {
  const CachedEmbedding* kept = face.track_id ? w.self->stream->tracks.find(*face.track_id) : nullptr;
  if (kept) {
    attach_cached(w, face, *kept);
  } else {
    face.status = GST_TACONITE_EMBEDDING_SKIPPED;
    face.norm = 0.0;
  }
}

// Tracked ROIs whose cached embedding is still fresh reuse it (in best mode: a predicted box, which
// has nothing to assess, reuses its track's best); the rest are to be prepared.
void reuse_fresh_embeddings(FrameWork& w) {
  Stream* st = w.self->stream;
  const TrackPolicy& policy = w.settings.tracks;
  w.faces.resize(w.jobs.size());
  w.predicted.assign(w.jobs.size(), false);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    w.faces[i].face = w.jobs[i];
    w.faces[i].track_id = w.ids[i];
    if (w.ids[i] && policy.active()) {
      const CachedEmbedding* cached = nullptr;
      if (!policy.best)
        cached = st->tracks.reuse(*w.ids[i], w.now, w.jobs[i].box, policy);
      else if ((w.predicted[i] = gst_taconite_roi_is_predicted(w.jobs[i].roi)))
        cached = st->tracks.reuse_best(*w.ids[i], w.now, std::nullopt, policy);
      if (cached) {
        attach_cached(w, w.faces[i], *cached);
        continue;
      }
    }
    w.prepared.push_back(i);
  }
}

// Face `k` of `prepared` as network input (into `chw`) and its quality: a ROI whose params carry
// plausible landmarks is warped to the template; else its box is cropped (aligned only for a
// crops-mode buffer, by contract).
void prepare_one_input(FrameWork& w, const ReadableFrame& frame, std::size_t k, std::vector<float>& chw) {
  const FaceJob& job = w.jobs[w.prepared[k]];
  FaceEmbedding& face = w.faces[w.prepared[k]];
  const int width = w.engine->input_width, height = w.engine->input_height;
  std::string rejected;
  const std::optional<cv::Matx23d> to_template =
      job.whole_buffer ? std::nullopt
                       : roi_alignment(job.roi, GST_VIDEO_FRAME_WIDTH(&frame.get()), GST_VIDEO_FRAME_HEIGHT(&frame.get()),
                                       width, height, &rejected);
  if (!rejected.empty())
    GST_WARNING_OBJECT(w.self, "ROI %d: ignoring its landmarks (%s); cropping its box unaligned", job.roi_id,
                       rejected.c_str());
  std::vector<cv::Point2d> landmarks;  // the plausible ones only, for the quality
  if (to_template) {
    taconite::vision::aligned_face_to_chw(frame.view(), *to_template, width, height, w.norm, chw);
    face.aligned = true;
    for (const Point2& p : roi_landmarks(job.roi)) landmarks.emplace_back(p.x, p.y);
  } else {
    face_to_chw(frame.view(), job, w.settings.margin, width, height, w.norm, chw);
    face.aligned = job.aligned_crop;
  }
  face.quality = taconite::vision::assess_face(job.box.width, landmarks, chw, width, height, w.norm);
}

// The prepared faces' network inputs into the stream's scratch, one after another, from the mapped
// frame. False after posting an error when the buffer does not hold the frame its caps describe.
bool prepare_network_inputs(FrameWork& w, GstBuffer* buffer) {
  Stream* st = w.self->stream;
  ReadableFrame frame;
  if (const taconite::Status mapped = frame.map(st->info, buffer); !mapped) {
    GST_ELEMENT_ERROR(w.self, STREAM, FAILED, ("A video buffer does not hold the frame it describes."),
                      ("%s (caps %s %dx%d): %" GST_PTR_FORMAT, mapped.error().message.c_str(), GST_VIDEO_INFO_NAME(&st->info),
                       GST_VIDEO_INFO_WIDTH(&st->info), GST_VIDEO_INFO_HEIGHT(&st->info), static_cast<gpointer>(buffer)));
    return false;
  }
  w.face_size = static_cast<std::size_t>(3) * w.engine->input_width * w.engine->input_height;
  st->scratch.resize(w.face_size * w.prepared.size());
  std::vector<float> one;
  for (std::size_t k = 0; k < w.prepared.size(); ++k) {
    prepare_one_input(w, frame, k, one);
    std::copy(one.begin(), one.end(), st->scratch.begin() + static_cast<std::ptrdiff_t>(k * w.face_size));
  }
  frame.unmap();
  return true;
}

// max-embeddings: a frame holding many faces to embed (several new tracks at once) would hold the stream
// for all their embeddings; the engine takes at most that many, faces without any embedding yet first,
// then the best-looking. The others wait for a later frame of their track: their cached embedding is
// attached meanwhile, or, with none, they pass on skipped (a track's identity waits a frame or two).
void defer_over_budget(FrameWork& w) {
  const std::size_t budget = w.settings.max_embeddings;
  if (budget == 0 || w.todo.size() <= budget) return;
  Stream* st = w.self->stream;
  auto cached = [&](std::size_t k) {
    const std::size_t i = w.prepared[k];
    return w.ids[i] ? st->tracks.find(*w.ids[i]) : nullptr;
  };
  auto quality = [&](std::size_t k) {
    const FaceEmbedding& face = w.faces[w.prepared[k]];
    return face.quality ? face.quality->score : 0.0;
  };
  std::stable_sort(w.todo.begin(), w.todo.end(), [&](std::size_t a, std::size_t b) {
    const bool a_new = cached(a) == nullptr, b_new = cached(b) == nullptr;
    return a_new != b_new ? a_new : quality(a) > quality(b);
  });
  for (std::size_t t = budget; t < w.todo.size(); ++t) attach_cached_or_skip(w, w.faces[w.prepared[w.todo[t]]]);
  w.todo.resize(budget);
  std::sort(w.todo.begin(), w.todo.end());  // the engine's inputs in scratch order
}

// async-tracks: a tracked face (one whose embedding its track's later frames reuse).
bool goes_to_background(const FrameWork& w, std::size_t i) {
  return w.async && w.ids[i] && w.settings.tracks.active();
}

// async-tracks: counts a new track's refusal; true once it was refused more than the patience allows.
bool refused_too_often(FrameWork& w, gint64 track) {
  auto& refused = w.self->stream->async.refused;
  if (refused.size() >= kMaxRefusedTracks) refused.clear();  // ids that never ended (no taconitetrack)
  return ++refused[track] > kFirstEmbeddingPatience;
}

// async-tracks: the tracked faces to embed go to the background embedder while it has room (the
// others wait for a later frame); this frame carries their track's cached embedding or none. A
// track's first embedding is never left behind: refused a place on kFirstEmbeddingPatience frames
// (every place holds a first embedding), its next frame waits for one (AsyncEmbedder::wait_for_room).
void submit_to_background(FrameWork& w) {
  if (!w.async) return;
  const std::vector<float>& scratch = w.self->stream->scratch;
  std::size_t kept = 0;
  for (const std::size_t k : w.todo) {
    const std::size_t i = w.prepared[k];
    if (!goes_to_background(w, i)) {
      w.todo[kept++] = k;
      continue;
    }
    FaceEmbedding& face = w.faces[i];
    const AsyncFace job{*w.ids[i], w.now, face.face.box, face.aligned, face.quality->score, tracker_owned(face.face.roi)};
    const std::span<const float> chw(scratch.data() + k * w.face_size, w.face_size);
    const bool first = w.self->stream->tracks.find(job.track) == nullptr;
    const int height = w.engine->input_height, width = w.engine->input_width;
    bool queued = w.async->submit(job, first, chw, 3, height, width);
    if (!queued && first && !w.async->has(job.track) && refused_too_often(w, job.track) && w.async->wait_for_room())
      queued = w.async->submit(job, first, chw, 3, height, width);
    if (queued) w.self->stream->async.refused.erase(job.track);
    attach_cached_or_skip(w, face);
  }
  w.todo.resize(kept);
}

// The engine's inputs: in best mode a tracked face goes to the engine only when its quality beats
// its track's best (TrackCache::reuse_best), else it reuses that best.
std::vector<taconite::FaceChw> choose_engine_inputs(FrameWork& w) {
  Stream* st = w.self->stream;
  const TrackPolicy& policy = w.settings.tracks;
  std::vector<taconite::FaceChw> inputs;
  for (std::size_t k = 0; k < w.prepared.size(); ++k) {
    const std::size_t i = w.prepared[k];
    if (w.ids[i] && policy.best) {
      const std::optional<double> measured =
          w.predicted[i] ? std::nullopt : std::optional<double>(w.faces[i].quality->score);
      if (const CachedEmbedding* cached = st->tracks.reuse_best(*w.ids[i], w.now, measured, policy)) {
        attach_cached(w, w.faces[i], *cached);
        continue;
      }
    }
    if (goes_to_background(w, i) && w.async->has(*w.ids[i])) {  // its last face is still being embedded
      attach_cached_or_skip(w, w.faces[i]);
      continue;
    }
    w.todo.push_back(k);
  }
  defer_over_budget(w);
  submit_to_background(w);
  for (const std::size_t k : w.todo)
    inputs.push_back({std::span<const float>(st->scratch.data() + k * w.face_size, w.face_size), 3,
                      w.engine->input_height, w.engine->input_width});
  return inputs;
}

// The engine's raw embeddings of `inputs` (none asked: none); nullopt when a flush cancelled the
// request (not an error) or after posting the engine's error.
std::optional<std::vector<taconite::Embedding>> run_engine(FrameWork& w, EngineClient& client,
                                                           const std::vector<taconite::FaceChw>& inputs,
                                                           GstBuffer* buffer, bool* used_engine) {
  if (inputs.empty()) return std::vector<taconite::Embedding>{};
  *used_engine = true;
  taconite::Result<std::vector<taconite::Embedding>> result = client.embed(inputs);
  if (result) return std::move(result.value());
  if (w.self->queue->flushing()) {
    // The shared engine dropped our request because a flush started.
    GST_DEBUG_OBJECT(w.self, "flushing: dropping %" GST_PTR_FORMAT, static_cast<gpointer>(buffer));
    return std::nullopt;
  }
  GST_ELEMENT_ERROR(w.self, STREAM, FAILED, ("The face-embedding engine failed."),
                    ("%s error: %s (backend %s)", taconite::to_string(result.error().kind),
                     result.error().message.c_str(), w.engine->backend.c_str()));
  return std::nullopt;
}

// A non-finite embedding has no direction to publish: the stream's first is reported.
void warn_non_finite_once(FrameWork& w, const std::string& face) {
  Stream* st = w.self->stream;
  if (!st->warned_non_finite)
    GST_ELEMENT_WARNING(w.self, STREAM, FAILED, ("The face-embedding engine returned a non-finite embedding."),
                        ("%s: its raw embedding holds NaN or an infinity (backend %s, model '%s'); the "
                         "face is passed on as skipped, without an embedding. Further ones of this stream "
                         "are counted in faces-skipped, not reported.",
                         face.c_str(), w.engine->backend.c_str(), w.engine->model.c_str()));
  st->warned_non_finite = true;
}

// The faces the engine embedded, normalised, their norm and quality noted and their track's cache
// updated. A non-finite embedding has no direction to publish (NaN would reach galleries and
// JSON): that face is skipped, and the stream's first one is reported.
void keep_embeddings(FrameWork& w, const std::vector<taconite::Embedding>& embeddings) {
  Stream* st = w.self->stream;
  const TrackPolicy& policy = w.settings.tracks;
  for (std::size_t t = 0; t < w.todo.size(); ++t) {
    const std::size_t i = w.prepared[w.todo[t]];
    FaceEmbedding& face = w.faces[i];
    const std::optional<double> norm = l2_normalise(embeddings[t], face.unit);
    if (!norm) {
      face.status = GST_TACONITE_EMBEDDING_SKIPPED;
      face.norm = 0.0;
      warn_non_finite_once(w, "ROI " + std::to_string(face.face.roi_id));
      continue;
    }
    face.norm = *norm;
    st->norms.add(face.norm);
    face.embedding_quality = face.quality->score * st->norms.factor(face.norm);
    if (w.ids[i] && policy.active())
      st->tracks.store(*w.ids[i], w.now, face.face.box, face.unit, face.norm, face.aligned, face.quality->score,
                       face.embedding_quality, policy, tracker_owned(face.face.roi));
  }
}

// The faces' metas on the buffer and the embedded / skipped / cached face counts.
void attach_frame_faces(FrameWork& w, GstBuffer* buffer) {
  attach_embeddings(buffer, w.faces, *w.engine);
  Counters* c = w.self->counters;
  for (const FaceEmbedding& face : w.faces) {
    switch (face.status) {
      case GST_TACONITE_EMBEDDING_COMPUTED: ++c->faces_embedded; break;
      case GST_TACONITE_EMBEDDING_CACHED: ++c->faces_cached; break;
      default: ++c->faces_skipped; break;
    }
  }
}

// After every frame: stale tracks leave the cache, the frame counts as embedded when it was due
// and not skipped, and the per-frame message is posted when asked for.
void finish_frame(FrameWork& w, GstBuffer* buffer) {
  const TrackPolicy& policy = w.settings.tracks;
  if (policy.active()) w.self->stream->tracks.evict(w.now, policy.timeout);
  if (w.due && !w.skip) ++w.self->counters->frames_embedded;
  GST_CAT_LOG_OBJECT(taconite_dataflow_debug, w.self, "embedded %zu faces of %" GST_PTR_FORMAT, w.faces.size(),
                     static_cast<gpointer>(buffer));
  if (w.settings.post_messages)
    gst_element_post_message(
        GST_ELEMENT(w.self),
        gst_message_new_element(GST_OBJECT(w.self),
                                frame_message_structure(buffer, w.self->stream->segment, *w.engine, w.faces)));
}

// The engine's part of a frame with faces to embed; false when the buffer is not to be pushed.
bool embed_selected_faces(FrameWork& w, EngineClient& client, GstBuffer* buffer, bool* used_engine) {
  reuse_fresh_embeddings(w);
  if (!w.prepared.empty()) {
    if (!prepare_network_inputs(w, buffer)) return false;
    const std::vector<taconite::FaceChw> inputs = choose_engine_inputs(w);
    const std::optional<std::vector<taconite::Embedding>> embeddings = run_engine(w, client, inputs, buffer, used_engine);
    if (!embeddings) return false;
    keep_embeddings(w, *embeddings);
  }
  attach_frame_faces(w, buffer);
  return true;
}

// async-tracks: the background embedder's finished faces into the track cache (their track's next
// frame carries them). False after posting the engine's error.
bool store_background_results(FrameWork& w) {
  if (!w.async) return true;
  Stream* st = w.self->stream;
  const TrackPolicy& policy = w.settings.tracks;
  for (AsyncResult& done : w.async->take_done()) {
    if (!done.embedding) {
      if (w.self->queue->flushing()) return true;
      GST_ELEMENT_ERROR(w.self, STREAM, FAILED, ("The face-embedding engine failed."),
                        ("%s error: %s (backend %s, async-tracks)", taconite::to_string(done.embedding.error().kind),
                         done.embedding.error().message.c_str(), w.engine->backend.c_str()));
      return false;
    }
    const AsyncFace& face = done.face;
    std::vector<float> unit;
    const std::optional<double> norm = l2_normalise(done.embedding.value(), unit);
    if (!norm) {
      warn_non_finite_once(w, "track " + std::to_string(face.track));
      continue;
    }
    st->norms.add(*norm);
    const double quality = face.tried * st->norms.factor(*norm);
    if (st->tracks.store(face.track, face.frame, face.box, unit, *norm, face.aligned, face.tried, quality, policy,
                         face.tracker_owned))
      st->async.fresh.insert(face.track);
  }
  return true;
}

}  // namespace

GstBuffer* embed_frame_faces(GstTaconiteAdaface* self, EngineClient& client, GstBuffer*& buffer, bool skip,
                             bool* used_engine) {
  FrameWork w = start_frame(self, client.info(), buffer, skip);
  if (!store_background_results(w)) {
    gst_buffer_unref(buffer);
    return nullptr;
  }
  select_frame_faces(w, buffer);
  if (w.due && w.skip) {
    pass_faces_skipped(w, buffer);
  } else if (!w.jobs.empty() && !embed_selected_faces(w, client, buffer, used_engine)) {
    gst_buffer_unref(buffer);
    return nullptr;
  }
  finish_frame(w, buffer);
  return buffer;
}

}  // namespace taconite::gst::adaface

// taconiteadaface: the src-pad task's work on buffers, events and queries, in stream order.
#include <gst/video/video.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "adaface_element.hpp"
#include "debug_categories.hpp"
#include "embedding_output.hpp"
#include "face_crop.hpp"
#include "face_selection.hpp"
#include "readable_frame.hpp"
#include "roi_landmarks.hpp"
#include "roi_params.hpp"
#include "roi_track_param.hpp"

#define GST_CAT_DEFAULT taconite_adaface_debug

namespace taconite::gst::adaface {

/* ------------------------------------------------------------------------------------------ */
/* The work done on the streaming thread                                                       */

static SelectionRules selection_rules(GstTaconiteAdaface* self, double* margin, ChannelOrder* order,
                                      gboolean* post_messages, guint* interval, TrackPolicy* tracks) {
  SelectionRules rules;
  GST_OBJECT_LOCK(self);
  const Settings& s = *self->settings;
  rules.mode = s.input_mode;
  rules.roi_type = g_quark_from_string(s.roi_type.c_str());
  rules.min_face_size = s.min_face_size;
  rules.max_faces = s.max_faces;
  *margin = s.margin;
  *order = s.channel_order;
  *post_messages = s.post_messages;
  *interval = s.interval;
  *tracks = s.tracks;
  GST_OBJECT_UNLOCK(self);
  return rules;
}

// Counts a buffer's processing time. With latency=0, the frames that ran the engine during the
// warm-up give the reported bound, fixed once known (one LATENCY message then).
static void record_latency(GstTaconiteAdaface* self, GstClockTime ns, bool used_engine) {
  Counters* c = self->counters;
  ++c->processed;
  c->processing_ns += ns;
  if (!used_engine || c->warmup_frames >= kLatencyWarmupFrames) return;
  if (c->warmup_frames++ > 0) c->warmup_max = std::max(c->warmup_max, ns);  // the first pays one-time set-up
  if (c->warmup_frames < kLatencyWarmupFrames) return;
  c->warmup_latency = std::max<GstClockTime>(c->warmup_max, 1);
  GST_DEBUG_OBJECT(self, "warm-up processing latency bound %" GST_TIME_FORMAT, GST_TIME_ARGS(c->warmup_max));
  if (c->latency.load() == 0) gst_element_post_message(GST_ELEMENT(self), gst_message_new_latency(GST_OBJECT(self)));
}

// The processing latency the element reports: the `latency` property, else the warm-up bound
// (0 until known).
GstClockTime processing_latency(GstTaconiteAdaface* self) {
  const GstClockTime fixed = self->counters->latency.load();
  return fixed ? fixed : self->counters->warmup_latency.load();
}

// True when downstream QoS says this buffer is already late (leaky=skip reacts to it).
static bool late_per_qos(GstTaconiteAdaface* self, GstBuffer* buffer) {
  const GstClockTime earliest = self->counters->qos_earliest.load();
  const GstClockTime pts = GST_BUFFER_PTS(buffer);
  if (!GST_CLOCK_TIME_IS_VALID(earliest) || !GST_CLOCK_TIME_IS_VALID(pts) || self->stream->segment.format != GST_FORMAT_TIME)
    return false;
  const GstClockTime running_time = gst_segment_to_running_time(&self->stream->segment, GST_FORMAT_TIME, pts);
  return GST_CLOCK_TIME_IS_VALID(running_time) && running_time <= earliest;
}

// A QoS message for a frame passed on without embeddings, with processed/dropped totals.
static void post_skip_qos(GstTaconiteAdaface* self, GstBuffer* buffer) {
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

// embed_faces without its exception boundary; `buffer` always holds the current buffer.
static GstBuffer* embed_faces_unguarded(GstTaconiteAdaface* self, EngineClient& client, GstBuffer*& buffer, bool skip,
                                        bool* used_engine) {
  Stream* st = self->stream;
  double margin = 0.0;
  ChannelOrder order = ChannelOrder::Rgb;
  gboolean post_messages = FALSE;
  guint interval = 1;
  TrackPolicy track_policy;
  const SelectionRules rules = selection_rules(self, &margin, &order, &post_messages, &interval, &track_policy);
  const guint64 now = st->frame_index++;
  const bool due = now % interval == 0;
  skip = skip || (self->queue->leaky_skip() && late_per_qos(self, buffer));

  // Faces are chosen on the buffer as it came; only a buffer that gets metas is made writable (a
  // shared one is copied then), and the faces then point at the writable buffer's ROIs.
  std::vector<FaceJob> jobs = due ? select_faces(buffer, st->info, rules) : std::vector<FaceJob>{};
  if (!jobs.empty()) {
    buffer = gst_buffer_make_writable(buffer);
    claim_face_rois(buffer, jobs, rules.roi_type);
  }
  const EngineInfo& engine = client.info();
  // The model's normalisation; an explicit channel-order replaces only its plane order.
  taconite::vision::PixelNormalisation norm = taconite::vision::normalisation_of(engine.preprocessing);
  if (order != ChannelOrder::Auto) norm.order = order;

  std::vector<FaceEmbedding> faces;
  if (due && skip) {
    for (const FaceJob& job : jobs) {
      FaceEmbedding face;
      face.face = job;
      face.aligned = false;
      face.status = GST_TACONITE_EMBEDDING_SKIPPED;
      faces.push_back(std::move(face));
    }
    attach_embeddings(buffer, faces, engine);
    self->counters->faces_skipped += faces.size();
    ++self->counters->frames_skipped;
    GST_CAT_LOG_OBJECT(taconite_dataflow_debug, self, "skipped %zu faces of %" GST_PTR_FORMAT, faces.size(),
                       static_cast<gpointer>(buffer));
    post_skip_qos(self, buffer);
  } else if (!jobs.empty()) {
    // Tracked ROIs whose cached embedding is still fresh reuse it; the rest have their network
    // input prepared and their quality assessed. In best mode a tracked face then goes to the
    // engine only when it beats its track's best (TrackCache::reuse_best).
    faces.resize(jobs.size());
    // Track ids are read for every frame (messages report them); reuse needs an active policy.
    const std::vector<std::optional<gint64>> ids = frame_track_ids(jobs, track_policy.id_param);
    const auto attach_cached = [&](std::size_t i, const CachedEmbedding& cached) {
      faces[i].unit = cached.unit;
      faces[i].norm = cached.norm;
      faces[i].aligned = cached.aligned;
      faces[i].status = GST_TACONITE_EMBEDDING_CACHED;
      faces[i].cache_age = static_cast<guint>(now - cached.embedded_at);
      faces[i].embedding_quality = cached.quality;
    };
    std::vector<bool> predicted(jobs.size(), false);
    std::vector<std::size_t> prepared;  // faces whose network input is prepared, in scratch order
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      faces[i].face = jobs[i];
      faces[i].track_id = ids[i];
      if (ids[i] && track_policy.active()) {
        const CachedEmbedding* cached = nullptr;
        if (!track_policy.best)
          cached = st->tracks.reuse(*ids[i], now, jobs[i].box, track_policy);
        else if ((predicted[i] = roi_predicted(jobs[i].roi)))  // nothing to assess in a guessed box
          cached = st->tracks.reuse_best(*ids[i], now, std::nullopt, track_policy);
        if (cached) {
          attach_cached(i, *cached);
          continue;
        }
      }
      prepared.push_back(i);
    }

    std::vector<std::size_t> todo;  // positions in `prepared` of the faces the engine embeds
    std::size_t non_finite = 0;     // faces whose raw embedding was not finite: skipped
    if (!prepared.empty()) {
      ReadableFrame frame;
      std::string problem;
      if (!frame.map(st->info, buffer, &problem)) {
        GST_ELEMENT_ERROR(self, STREAM, FAILED, ("A video buffer does not hold the frame it describes."),
                          ("%s (caps %s %dx%d): %" GST_PTR_FORMAT, problem.c_str(), GST_VIDEO_INFO_NAME(&st->info),
                           GST_VIDEO_INFO_WIDTH(&st->info), GST_VIDEO_INFO_HEIGHT(&st->info),
                           static_cast<gpointer>(buffer)));
        gst_buffer_unref(buffer);
        return nullptr;
      }
      const std::size_t face_size = static_cast<std::size_t>(3) * engine.input_width * engine.input_height;
      st->scratch.resize(face_size * prepared.size());
      std::vector<float> one;
      for (std::size_t k = 0; k < prepared.size(); ++k) {
        const FaceJob& job = jobs[prepared[k]];
        // A ROI whose params carry plausible landmarks is warped to the template; else its box is
        // cropped (aligned only for a crops-mode buffer, by contract).
        std::string rejected;
        const std::optional<cv::Matx23d> to_template =
            job.whole_buffer ? std::nullopt
                             : roi_alignment(job.roi, GST_VIDEO_FRAME_WIDTH(&frame.get()),
                                             GST_VIDEO_FRAME_HEIGHT(&frame.get()), engine.input_width,
                                             engine.input_height, &rejected);
        if (!rejected.empty())
          GST_WARNING_OBJECT(self, "ROI %d: ignoring its landmarks (%s); cropping its box unaligned", job.roi_id,
                             rejected.c_str());
        std::vector<cv::Point2d> landmarks;  // the plausible ones only, for the quality
        if (to_template) {
          taconite::vision::aligned_face_to_chw(frame.view(), *to_template, engine.input_width, engine.input_height,
                                                norm, one);
          faces[prepared[k]].aligned = true;
          for (const Point2& p : roi_landmarks(job.roi)) landmarks.emplace_back(p.x, p.y);
        } else {
          face_to_chw(frame.view(), job, margin, engine.input_width, engine.input_height, norm, one);
          faces[prepared[k]].aligned = job.aligned_crop;
        }
        std::copy(one.begin(), one.end(), st->scratch.begin() + static_cast<std::ptrdiff_t>(k * face_size));
        faces[prepared[k]].quality =
            taconite::vision::assess_face(job.box.width, landmarks, one, engine.input_width, engine.input_height, norm);
      }
      frame.unmap();

      std::vector<taconite::FaceChw> inputs;
      for (std::size_t k = 0; k < prepared.size(); ++k) {
        const std::size_t i = prepared[k];
        if (ids[i] && track_policy.best) {
          const std::optional<double> measured =
              predicted[i] ? std::nullopt : std::optional<double>(faces[i].quality->score);
          if (const CachedEmbedding* cached = st->tracks.reuse_best(*ids[i], now, measured, track_policy)) {
            attach_cached(i, *cached);
            continue;
          }
        }
        todo.push_back(k);
        inputs.push_back({std::span<const float>(st->scratch.data() + k * face_size, face_size), 3,
                          engine.input_height, engine.input_width});
      }

      taconite::Result<std::vector<taconite::Embedding>> result = std::vector<taconite::Embedding>{};
      if (!inputs.empty()) {
        *used_engine = true;
        result = client.embed(inputs);
      }
      if (!result && self->queue->flushing()) {
        // The shared engine dropped our request because a flush started: not an error.
        GST_DEBUG_OBJECT(self, "flushing: dropping %" GST_PTR_FORMAT, static_cast<gpointer>(buffer));
        gst_buffer_unref(buffer);
        return nullptr;
      }
      if (!result) {
        GST_ELEMENT_ERROR(self, STREAM, FAILED, ("The face-embedding engine failed."),
                          ("%s error: %s (backend %s)", taconite::to_string(result.error().kind),
                           result.error().message.c_str(), engine.backend.c_str()));
        gst_buffer_unref(buffer);
        return nullptr;
      }
      for (std::size_t t = 0; t < todo.size(); ++t) {
        const std::size_t i = prepared[todo[t]];
        FaceEmbedding& face = faces[i];
        const std::optional<double> norm = l2_normalise(result.value()[t], face.unit);
        if (!norm) {
          // No direction to publish (NaN would reach galleries and JSON): the face is skipped.
          face.status = GST_TACONITE_EMBEDDING_SKIPPED;
          face.norm = 0.0;
          if (!st->warned_non_finite)
            GST_ELEMENT_WARNING(self, STREAM, FAILED, ("The face-embedding engine returned a non-finite embedding."),
                                ("ROI %d: its raw embedding holds NaN or an infinity (backend %s, model '%s'); the "
                                 "face is passed on as skipped, without an embedding. Further ones of this stream "
                                 "are counted in faces-skipped, not reported.",
                                 face.face.roi_id, engine.backend.c_str(), engine.model.c_str()));
          st->warned_non_finite = true;
          ++non_finite;
          continue;
        }
        face.norm = *norm;
        st->norms.add(face.norm);
        face.embedding_quality = face.quality->score * st->norms.factor(face.norm);
        if (ids[i] && track_policy.active())
          st->tracks.store(*ids[i], now, face.face.box, face.unit, face.norm, face.aligned, face.quality->score,
                           face.embedding_quality, track_policy, tracker_owned(face.face.roi));
      }
    }
    attach_embeddings(buffer, faces, engine);
    self->counters->faces_embedded += todo.size() - non_finite;
    self->counters->faces_skipped += non_finite;
    self->counters->faces_cached += jobs.size() - todo.size();
  }
  if (track_policy.active()) st->tracks.evict(now, track_policy.timeout);
  if (due && !skip) ++self->counters->frames_embedded;
  GST_CAT_LOG_OBJECT(taconite_dataflow_debug, self, "embedded %zu faces of %" GST_PTR_FORMAT, faces.size(), static_cast<gpointer>(buffer));
  if (post_messages)
    gst_element_post_message(GST_ELEMENT(self),
                             gst_message_new_element(GST_OBJECT(self), frame_message_structure(buffer, st->segment, engine, faces)));
  return buffer;
}

// Embeds the buffer's faces with `client` and attaches the results; with `skip` the faces are only
// flagged skipped (no embedding). Sets `used_engine` when the engine ran. Returns the (possibly
// new) buffer, or nullptr after posting an error or when a flush cancelled the engine request.
// No exception (OpenCV, allocation) leaves the streaming thread: it becomes an element error.
static GstBuffer* embed_faces(GstTaconiteAdaface* self, EngineClient& client, GstBuffer* buffer, bool skip,
                              bool* used_engine) {
  try {
    return embed_faces_unguarded(self, client, buffer, skip, used_engine);
  } catch (const std::exception& e) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Could not embed the faces of a video buffer."),
                      ("%s while processing %" GST_PTR_FORMAT, e.what(), static_cast<gpointer>(buffer)));
    gst_buffer_unref(buffer);
    return nullptr;
  }
}

BufferOutcome process_buffer(GstTaconiteAdaface* self, GstBuffer* buffer, bool skip) {
  if (!self->stream->have_info) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("A buffer arrived before caps."), ("no CAPS event before %" GST_PTR_FORMAT, static_cast<gpointer>(buffer)));
    gst_buffer_unref(buffer);
    return {GST_FLOW_NOT_NEGOTIATED, true};
  }
  // Loaded before the pads were activated and dropped only after the task stopped.
  const std::shared_ptr<EngineClient> client = self->engine->get();
  const auto start = std::chrono::steady_clock::now();
  bool used_engine = false;
  self->queue->set_processing(true);
  buffer = embed_faces(self, *client, buffer, skip, &used_engine);
  self->queue->set_processing(false);
  // embed_faces returns nullptr after an error, or when a flush cancelled the engine request.
  if (!buffer) {
    if (self->queue->flushing()) return {GST_FLOW_FLUSHING, false};
    return {GST_FLOW_ERROR, true};
  }
  const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
  record_latency(self, static_cast<GstClockTime>(elapsed.count()), used_engine);
  GST_CAT_LOG_OBJECT(taconite_dataflow_debug, self, "pushing %" GST_PTR_FORMAT, static_cast<gpointer>(buffer));
  const GstFlowReturn ret = gst_pad_push(self->srcpad, buffer);
  if (ret == GST_FLOW_OK) ++self->counters->frames_out;
  return {ret, false};
}

// Serialized events reach the task in order with the buffers; apply them to the stream state
// here, then forward.
void process_event(GstTaconiteAdaface* self, GstEvent* event) {
  Stream* st = self->stream;
  GST_CAT_LOG_OBJECT(taconite_dataflow_debug, self, "pushing %" GST_PTR_FORMAT, static_cast<gpointer>(event));
  switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_CAPS: {
      GstCaps* caps = nullptr;
      gst_event_parse_caps(event, &caps);
      GST_OBJECT_LOCK(self);  // src_query reads the frame rate
      st->have_info = gst_video_info_from_caps(&st->info, caps);
      GST_OBJECT_UNLOCK(self);
      GST_DEBUG_OBJECT(self, "stream caps %" GST_PTR_FORMAT, static_cast<gpointer>(caps));
      break;
    }
    case GST_EVENT_SEGMENT: gst_event_copy_segment(event, &st->segment); break;
    case GST_EVENT_STREAM_START:
      gst_segment_init(&st->segment, GST_FORMAT_TIME);
      st->frame_index = 0;
      st->tracks.clear();
      st->warned_non_finite = false;
      break;
    case GST_EVENT_CUSTOM_DOWNSTREAM:
      // The ids are taconitetrack's, in the object_id param: another track-id-param holds other ids.
      if (const std::optional<TracksEnded> ended = tracks_ended(event)) {
        GST_OBJECT_LOCK(self);
        const bool ours = self->settings->tracks.id_param == kObjectIdParam;
        GST_OBJECT_UNLOCK(self);
        if (ours) st->tracks.end(*ended);
      }
      break;
    default: break;
  }
  gst_pad_push_event(self->srcpad, event);  // as queue, the result does not stop the task
}

bool answer_query(GstTaconiteAdaface* self, GstQuery* query) {
  gboolean result = gst_pad_peer_query(self->srcpad, query);
  if (GST_QUERY_TYPE(query) == GST_QUERY_ALLOCATION) {
    if (!result) {
      // Nobody downstream proposes anything: the buffers only pass through us, and we read any
      // stride or plane offset, so strided buffers are welcome.
      gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
      result = TRUE;
    }
    // We read the pixels ourselves and ignore GstVideoCropMeta: make upstream crop for real.
    guint index = 0;
    while (gst_query_find_allocation_meta(query, GST_VIDEO_CROP_META_API_TYPE, &index))
      gst_query_remove_nth_allocation_meta(query, index);
  }
  GST_CAT_LOG_OBJECT(taconite_dataflow_debug, self, "answered %" GST_PTR_FORMAT ": %d", static_cast<gpointer>(query), result);
  return result;
}

}  // namespace taconite::gst::adaface

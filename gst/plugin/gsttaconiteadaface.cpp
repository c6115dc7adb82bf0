/**
 * SECTION:element-taconiteadaface
 * @title: taconiteadaface
 *
 * Computes AdaFace IR face embeddings (512 floats) on its own streaming thread and attaches them
 * to the video buffers, which pass through unchanged and in order.
 *
 * The faces are either the face ROIs of each frame (`input-mode=rois`, the default:
 * #GstVideoRegionOfInterestMeta of type `roi-type`, as `facedetect` emits; each box is cropped
 * square with `margin` and resized, or warped to the template when its params carry landmarks;
 * a frame without face ROIs gets no embedding) or the whole buffer (`input-mode=crops`: each
 * buffer is one aligned face crop, e.g. 112x112). `auto` takes the ROIs when a buffer has some,
 * else the whole buffer as an unaligned face. Every face gets a #GstTaconiteEmbeddingMeta
 * (library gsttaconitemeta-1.0) linked to its ROI by id (an id that another ROI of the buffer
 * already uses, or -1, is replaced by a new one); ROI faces also get a `taconite-embedding`
 * structure in the ROI's params, and `post-messages=true` posts one `taconiteadaface` element
 * message per frame.
 *
 * Like `queue`, the sink pad enqueues (at most `max-queued` buffers, then upstream blocks) and a
 * src-pad task runs the engine and pushes; serialized events and queries stay in order with the
 * buffers. The bundle is loaded in the READY to PAUSED transition. LATENCY queries get a fixed
 * processing latency: the `latency` property, or (0) the slowest of a warm-up of frames.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 multifilesrc location=face%03d.png caps=image/png,framerate=1/1 ! pngdec ! \
 *     videoconvert ! taconiteadaface bundle=/path/to/bundle input-mode=crops post-messages=true ! \
 *     fakesink -m
 * ]| Embeds pre-cropped face images and prints one message per image.
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! facedetect display=false ! \
 *     taconiteadaface bundle=/path/to/bundle input-mode=rois min-face-size=40 margin=0.1 ! \
 *     videoconvert ! autovideosink
 * ]| Embeds the faces facedetect finds in a camera stream.
 *
 * Since: 0.1
 */
#include "gsttaconiteadaface.h"

#include <gst/video/video.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "debug_categories.hpp"
#include "embedding_output.hpp"
#include "engine_client.hpp"
#include "enums.hpp"
#include "face_alignment.hpp"
#include "face_crop.hpp"
#include "cxx_boundary.hpp"
#include "face_selection.hpp"
#include "item_queue.hpp"
#include "property_table.hpp"
#include "readable_frame.hpp"
#include "roi_params.hpp"
#include "track_cache.hpp"
#include "video_formats.hpp"

#define GST_CAT_DEFAULT taconite_adaface_debug

GST_DEBUG_CATEGORY(taconite_adaface_debug);
GST_DEBUG_CATEGORY(taconite_dataflow_debug);
GST_DEBUG_CATEGORY(taconite_runtime_debug);

void taconite_debug_categories_init() {
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    GST_DEBUG_CATEGORY_INIT(taconite_adaface_debug, "taconiteadaface", 0, "taconiteadaface element");
    GST_DEBUG_CATEGORY_INIT(taconite_dataflow_debug, "taconiteadaface-dataflow", 0,
                            "taconiteadaface per-buffer dataflow");
    GST_DEBUG_CATEGORY_INIT(taconite_runtime_debug, "taconite-runtime", 0, "taconite inference runtime (engine)");
    g_once_init_leave(&done, 1);
  }
}

namespace {

using namespace taconite::gst;

constexpr guint kDefaultMaxQueued = 8;
constexpr LeakyMode kDefaultLeaky = LeakyMode::No;
constexpr guint64 kDefaultLatency = 0;  // automatic
constexpr guint64 kMaxLatency = 3600 * GST_SECOND;
// latency=0: the reported processing latency is the slowest of this many warm-up frames that ran
// the engine (the first one, which pays one-time set-up, left out).
constexpr guint kLatencyWarmupFrames = 30;

// Property values and their defaults (see properties()); guarded by the object lock.
struct Settings {
  std::string bundle;
  BackendChoice backend = BackendChoice::Auto;
  gint threads = 0;
  gint sessions = 1;
  InputMode input_mode = InputMode::Rois;
  std::string roi_type = "face";
  guint min_face_size = 0;
  guint max_faces = 0;
  double margin = 0.0;
  ChannelOrder channel_order = ChannelOrder::Auto;
  gboolean post_messages = FALSE;
  guint batch_size = 1;
  guint batch_timeout_us = 0;
  guint interval = 1;
  TrackPolicy tracks;  // track-id-param, reinfer-*, track-best, track-timeout, best-*
};

// The engine handle: set at READY->PAUSED and dropped at PAUSED->READY on the state-change thread,
// while FLUSH_START (any thread) and the task use it; shared, so a reader keeps it alive.
class EngineSlot {
 public:
  std::shared_ptr<EngineClient> get() const {
    std::lock_guard<std::mutex> guard(lock_);
    return client_;
  }
  void set(std::shared_ptr<EngineClient> client) {
    std::lock_guard<std::mutex> guard(lock_);
    client_.swap(client);  // the old client is released outside the lock
  }

 private:
  mutable std::mutex lock_;
  std::shared_ptr<EngineClient> client_;
};

// What only the streaming (task) thread touches while the pads are active.
struct Stream {
  GstVideoInfo info;
  bool have_info = false;
  GstSegment segment;
  std::vector<float> scratch;
  guint64 frame_index = 0;  // buffers since STREAM_START/flush, for `interval` and tracks
  TrackCache tracks;        // cached embeddings per tracking id
  taconite::vision::NormStatistics norms;  // the model's embedding norms, for the quality (kept across flushes)
  bool warned_non_finite = false;  // the engine's first NaN/Inf embedding of the stream was reported
};

struct Counters {
  std::atomic<guint64> frames_in{0};
  std::atomic<guint64> frames_out{0};
  std::atomic<guint64> faces_embedded{0};
  std::atomic<guint64> faces_skipped{0};
  std::atomic<guint64> faces_cached{0};
  std::atomic<guint64> frames_embedded{0};  // QoS "processed"
  std::atomic<guint64> frames_skipped{0};   // QoS "dropped" (passed on without embeddings)
  std::atomic<GstClockTime> qos_earliest{GST_CLOCK_TIME_NONE};  // from downstream QoS events
  std::atomic<guint64> processed{0};
  std::atomic<guint64> processing_ns{0};
  std::atomic<GstClockTime> latency{kDefaultLatency};  // the `latency` property
  std::atomic<GstClockTime> warmup_latency{0};         // latency=0: the warm-up bound once known
  guint warmup_frames = 0;                             // task thread only
  GstClockTime warmup_max = 0;                         // task thread only
};

}  // namespace

struct _GstTaconiteAdaface {
  GstElement parent;
  GstPad* sinkpad;
  GstPad* srcpad;
  Settings* settings;
  ItemQueue* queue;
  EngineSlot* engine;
  Stream* stream;
  Counters* counters;
};


static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(TACONITE_ADAFACE_VIDEO_FORMATS)));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(TACONITE_ADAFACE_VIDEO_FORMATS)));

G_DEFINE_TYPE_WITH_CODE(GstTaconiteAdaface, gst_taconite_adaface, GST_TYPE_ELEMENT, taconite_debug_categories_init());
GST_ELEMENT_REGISTER_DEFINE(taconiteadaface, "taconiteadaface", GST_RANK_NONE, GST_TYPE_TACONITE_ADAFACE);

/* ------------------------------------------------------------------------------------------ */
/* Engine lifetime                                                                             */

static const char* what_to_do(taconite::ErrorKind kind) {
  switch (kind) {
    case taconite::ErrorKind::Io:
      return "Set the 'bundle' property to a bundle directory (manifest.txt, tensors.txt, tensors.bin) that this "
             "process can read.";
    case taconite::ErrorKind::Bundle:
      return "The bundle is malformed at the line quoted above: re-export it, or write a test bundle with "
             "taconite-mkbundle.";
    case taconite::ErrorKind::Device:
      return "Choose another backend (backend=cpu or backend=cpu-reference), or check the NPU driver and device "
             "permissions.";
    case taconite::ErrorKind::Input:  // at load: a setting out of range, never the element's own doing
      return "Check the 'threads' and 'sessions' properties and the TACONITE_* environment variables: the value "
             "named above is outside its range.";
  }
  return "";
}

static gboolean load_engine(GstTaconiteAdaface* self) {
  EngineRequest request;
  GST_OBJECT_LOCK(self);
  request.bundle = self->settings->bundle;
  request.backend = backend_choice_name(self->settings->backend);
  request.threads = self->settings->threads;
  request.sessions = self->settings->sessions;
  BatchPolicy batching;
  batching.max_faces = self->settings->batch_size;
  batching.timeout = std::chrono::microseconds(self->settings->batch_timeout_us);
  GST_OBJECT_UNLOCK(self);

  if (request.bundle.empty()) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("No face-embedding bundle set."),
                      ("Set the 'bundle' property to an AdaFace IR bundle directory (write a test bundle with "
                       "taconite-mkbundle --model ir18 --out DIR)."));
    return FALSE;
  }
  GST_CAT_INFO_OBJECT(taconite_runtime_debug, self, "loading bundle %s with backend %s", request.bundle.c_str(),
                      request.backend.c_str());
  taconite::Result<std::unique_ptr<EngineClient>> opened = open_engine_client(request);
  if (!opened) {
    const taconite::Error& error = opened.error();
    // GST_ELEMENT_ERROR with a code chosen at run time, plus details applications can read.
    const GstResourceError code =
        error.kind == taconite::ErrorKind::Io ? GST_RESOURCE_ERROR_OPEN_READ : GST_RESOURCE_ERROR_SETTINGS;
    gst_element_message_full_with_details(
        GST_ELEMENT(self), GST_MESSAGE_ERROR, GST_RESOURCE_ERROR, code,
        g_strdup_printf("Could not load the face-embedding bundle '%s'.", request.bundle.c_str()),
        g_strdup_printf("%s error: %s. %s", taconite::to_string(error.kind), error.message.c_str(),
                        what_to_do(error.kind)),
        __FILE__, GST_FUNCTION, __LINE__,
        gst_structure_new("details", "bundle", G_TYPE_STRING, request.bundle.c_str(), "backend", G_TYPE_STRING,
                          request.backend.c_str(), "error-kind", G_TYPE_STRING, taconite::to_string(error.kind),
                          nullptr));
    return FALSE;
  }
  const EngineInfo& info = opened.value()->info();
  GST_CAT_INFO_OBJECT(taconite_runtime_debug, self, "loaded model '%s' (%dx%d -> %d) on backend %s (%s)",
                      info.model.c_str(), info.input_width, info.input_height, info.embed_dim, info.backend.c_str(),
                      info.backend_reason.c_str());
  for (const std::string& finding : info.diagnostics)
    GST_CAT_WARNING_OBJECT(taconite_runtime_debug, self, "bundle check: %s", finding.c_str());
  std::shared_ptr<EngineClient> engine = std::move(opened).value();
  if (const std::string& note = engine->sharing_note(); !note.empty())
    GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS, ("Shared engine: %s.", note.c_str()), (nullptr));
  engine->set_batching(batching);
  self->engine->set(std::move(engine));
  return TRUE;
}

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
static GstClockTime processing_latency(GstTaconiteAdaface* self) {
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
  if (order == ChannelOrder::Auto) order = engine.bgr_input ? ChannelOrder::Bgr : ChannelOrder::Rgb;

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
                                                order, one);
          faces[prepared[k]].aligned = true;
          for (const Point2& p : roi_landmarks(job.roi)) landmarks.emplace_back(p.x, p.y);
        } else {
          face_to_chw(frame.view(), job, margin, engine.input_width, engine.input_height, order, one);
          faces[prepared[k]].aligned = job.aligned_crop;
        }
        std::copy(one.begin(), one.end(), st->scratch.begin() + static_cast<std::ptrdiff_t>(k * face_size));
        faces[prepared[k]].quality =
            taconite::vision::assess_face(job.box.width, landmarks, one, engine.input_width, engine.input_height);
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
                           face.embedding_quality, track_policy);
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

// A buffer's flow result, and whether the element already posted an error message for it.
struct BufferOutcome {
  GstFlowReturn ret = GST_FLOW_OK;
  bool error_posted = false;
};

static BufferOutcome process_buffer(GstTaconiteAdaface* self, GstBuffer* buffer, bool skip) {
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
static void process_event(GstTaconiteAdaface* self, GstEvent* event) {
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
    default: break;
  }
  gst_pad_push_event(self->srcpad, event);  // as queue, the result does not stop the task
}

static bool answer_query(GstTaconiteAdaface* self, GstQuery* query) {
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

static void src_loop_unguarded(gpointer user_data) {
  auto* self = GST_TACONITE_ADAFACE(user_data);
  ItemQueue* q = self->queue;
  const std::optional<TakenItem> taken = q->take();
  if (!taken) {
    GST_DEBUG_OBJECT(self, "task paused");
    return;
  }
  if (taken->reset) {
    // A flush came before this item: per-stream state starts over (reset here, on the task
    // thread that owns it).
    self->stream->frame_index = 0;
    self->stream->tracks.clear();
  }
  GstMiniObject* item = taken->object;
  if (GST_IS_BUFFER(item)) {
    const BufferOutcome outcome = process_buffer(self, GST_BUFFER_CAST(item), taken->skip);
    const FailureReport report = q->buffer_done(outcome.ret, outcome.error_posted);
    if (outcome.ret != GST_FLOW_OK) GST_DEBUG_OBJECT(self, "buffer result %s", gst_flow_get_name(outcome.ret));
    if (report.post_flow_error) GST_ELEMENT_FLOW_ERROR(self, outcome.ret);
    if (report.push_eos) gst_pad_push_event(self->srcpad, gst_event_new_eos());
  } else if (GST_IS_EVENT(item)) {
    const bool eos = GST_EVENT_TYPE(item) == GST_EVENT_EOS;
    process_event(self, GST_EVENT_CAST(item));
    if (eos) q->eos_pushed();
  } else {
    GstQuery* query = GST_QUERY_CAST(item);
    q->answer(query, answer_query(self, query));
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Sink pad                                                                                    */

static GstFlowReturn sink_chain_unguarded(GstPad*, GstObject* parent, GstBuffer* buffer) {
  auto* self = GST_TACONITE_ADAFACE(parent);
  ++self->counters->frames_in;
  GST_CAT_LOG_OBJECT(taconite_dataflow_debug, self, "queueing %" GST_PTR_FORMAT, static_cast<gpointer>(buffer));
  const GstFlowReturn ret = self->queue->push_buffer(buffer);
  if (ret != GST_FLOW_OK)
    GST_CAT_LOG_OBJECT(taconite_dataflow_debug, self, "refused a buffer: %s", gst_flow_get_name(ret));
  return ret;
}

static GstFlowReturn sink_event_unguarded(GstPad* pad, GstObject* parent, GstEvent* event) {
  auto* self = GST_TACONITE_ADAFACE(parent);
  GST_CAT_LOG_OBJECT(taconite_dataflow_debug, self, "received %" GST_PTR_FORMAT, static_cast<gpointer>(event));

  switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_FLUSH_START: {
      gst_pad_push_event(self->srcpad, event);
      self->queue->set_flushing();
      // Our task may wait in the shared engine behind other streams' faces: withdraw its request
      // (sticky until FLUSH_STOP).
      if (const std::shared_ptr<EngineClient> client = self->engine->get()) client->cancel();
      gst_pad_pause_task(self->srcpad);  // waits for the current iteration to finish
      GST_DEBUG_OBJECT(self, "flush started, task paused");
      return GST_FLOW_OK;
    }
    case GST_EVENT_FLUSH_STOP: {
      gst_pad_push_event(self->srcpad, event);
      self->counters->qos_earliest = GST_CLOCK_TIME_NONE;
      if (const std::shared_ptr<EngineClient> client = self->engine->get()) client->resume();
      self->queue->flush_stop();  // the task resets frame numbers and tracks before its next item
      GST_DEBUG_OBJECT(self, "flush stopped, task restarted");
      return GST_FLOW_OK;
    }
    default: break;
  }

  if (!GST_EVENT_IS_SERIALIZED(event)) return gst_pad_push_event(self->srcpad, event) ? GST_FLOW_OK : GST_FLOW_ERROR;

  if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
    GstCaps* caps = nullptr;
    GstVideoInfo info;
    gst_event_parse_caps(event, &caps);
    if (!gst_video_info_from_caps(&info, caps)) {
      GST_WARNING_OBJECT(self, "refusing caps %" GST_PTR_FORMAT, static_cast<gpointer>(caps));
      gst_event_unref(event);
      return GST_FLOW_NOT_NEGOTIATED;
    }
  }

  const EventVerdict verdict = self->queue->push_event(event);
  if (verdict.ret != GST_FLOW_OK)
    GST_DEBUG_OBJECT(self, "refused a serialized event: %s", gst_flow_get_name(verdict.ret));
  // EOS after the task stopped on NOT_LINKED or an error: nobody else will say so (as queue).
  if (verdict.post_flow_error) GST_ELEMENT_FLOW_ERROR(self, verdict.ret);
  (void)pad;
  return verdict.ret;
}

static gboolean sink_query_unguarded(GstPad* pad, GstObject* parent, GstQuery* query) {
  auto* self = GST_TACONITE_ADAFACE(parent);
  if (!GST_QUERY_IS_SERIALIZED(query)) return gst_pad_query_default(pad, parent, query);
  // Serialized queries (ALLOCATION, DRAIN, ...) go through the queue and are answered by the
  // task, after every buffer queued before them.
  GST_CAT_LOG_OBJECT(taconite_dataflow_debug, self, "queueing %" GST_PTR_FORMAT, static_cast<gpointer>(query));
  return self->queue->push_query(query);
}

static gboolean sink_activate_mode_unguarded(GstPad* pad, GstObject* parent, GstPadMode mode, gboolean active) {
  auto* self = GST_TACONITE_ADAFACE(parent);
  if (mode != GST_PAD_MODE_PUSH) return FALSE;
  if (!active) {
    self->queue->set_flushing();
    // Wait for a chain call that may still be running (it sees FLUSHING and returns).
    GST_PAD_STREAM_LOCK(pad);
    self->queue->clear();
    GST_PAD_STREAM_UNLOCK(pad);
  }
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* Src pad                                                                                     */

static gboolean src_activate_mode_unguarded(GstPad* pad, GstObject* parent, GstPadMode mode, gboolean active) {
  auto* self = GST_TACONITE_ADAFACE(parent);
  if (mode != GST_PAD_MODE_PUSH) return FALSE;
  const std::shared_ptr<EngineClient> client = self->engine->get();
  if (active) {
    // The task is not running: its state is ours to reset.
    GST_OBJECT_LOCK(self);  // src_query reads the caps
    self->stream->have_info = false;
    GST_OBJECT_UNLOCK(self);
    self->stream->frame_index = 0;
    self->stream->tracks.clear();
    self->stream->norms.clear();  // the next bundle may be another model
    self->stream->warned_non_finite = false;
    gst_segment_init(&self->stream->segment, GST_FORMAT_TIME);
    if (client) client->resume();
    return self->queue->activate();
  }
  self->queue->set_flushing();
  // As on FLUSH_START: do not wait behind other streams' batches in the shared engine.
  if (client) client->cancel();
  const gboolean stopped = gst_pad_stop_task(pad);  // joins the task
  self->queue->clear();
  return stopped;
}

// a + b, or GST_CLOCK_TIME_NONE (unbounded) when either is or the sum overflows.
static GstClockTime add_latency(GstClockTime a, GstClockTime b) {
  if (!GST_CLOCK_TIME_IS_VALID(a) || !GST_CLOCK_TIME_IS_VALID(b) || a > GST_CLOCK_TIME_NONE - 1 - b)
    return GST_CLOCK_TIME_NONE;
  return a + b;
}

static gboolean src_query_unguarded(GstPad* pad, GstObject* parent, GstQuery* query) {
  auto* self = GST_TACONITE_ADAFACE(parent);
  if (GST_QUERY_TYPE(query) != GST_QUERY_LATENCY) return gst_pad_query_default(pad, parent, query);

  if (!gst_pad_peer_query(self->sinkpad, query)) return FALSE;
  gboolean live = FALSE;
  GstClockTime min = 0, max = GST_CLOCK_TIME_NONE;
  gst_query_parse_latency(query, &live, &min, &max);
  // Our processing time (the `latency` property, or the warm-up bound) delays every buffer; the
  // queue can hold its buffer limit more frames. Without a frame rate the queue's span is unknown,
  // so the maximum is unbounded, as `queue` reports it.
  const GstClockTime ours = processing_latency(self);
  const guint64 queued_frames = self->queue->buffer_limit();
  GST_OBJECT_LOCK(self);
  const GstVideoInfo info = self->stream->info;
  const bool have_info = self->stream->have_info;
  GST_OBJECT_UNLOCK(self);
  min = add_latency(min, ours);
  if (have_info && GST_VIDEO_INFO_FPS_N(&info) > 0) {
    // queued_frames x fps_d / fps_n seconds; uint64_scale computes in 128 bits and returns NONE
    // (unbounded) on overflow.
    const auto fps_n = static_cast<guint64>(GST_VIDEO_INFO_FPS_N(&info));
    const auto fps_d = static_cast<guint64>(GST_VIDEO_INFO_FPS_D(&info));
    const GstClockTime span = gst_util_uint64_scale(queued_frames, GST_SECOND * fps_d, fps_n);
    max = add_latency(add_latency(max, ours), span);
  } else {
    max = GST_CLOCK_TIME_NONE;
  }
  GST_DEBUG_OBJECT(self, "latency: live %d min %" GST_TIME_FORMAT " max %" GST_TIME_FORMAT " (ours %" GST_TIME_FORMAT ")",
                   live, GST_TIME_ARGS(min), GST_TIME_ARGS(max), GST_TIME_ARGS(ours));
  gst_query_set_latency(query, live, min, max);
  return TRUE;
}

static gboolean src_event_unguarded(GstPad* pad, GstObject* parent, GstEvent* event) {
  auto* self = GST_TACONITE_ADAFACE(parent);
  if (GST_EVENT_TYPE(event) == GST_EVENT_QOS) {
    // Downstream is late by `diff` at `timestamp` (running time): with leaky=skip, frames up to
    // then pass without embeddings, as GstBaseTransform drops late buffers (but we never drop).
    GstQOSType type;
    gdouble proportion = 1.0;
    GstClockTimeDiff diff = 0;
    GstClockTime timestamp = GST_CLOCK_TIME_NONE;
    gst_event_parse_qos(event, &type, &proportion, &diff, &timestamp);
    GstClockTime earliest = GST_CLOCK_TIME_NONE;
    if (GST_CLOCK_TIME_IS_VALID(timestamp) && diff > 0) earliest = timestamp + static_cast<GstClockTime>(diff);
    self->counters->qos_earliest = earliest;
    GST_DEBUG_OBJECT(self, "QoS: proportion %f diff %" G_GINT64_FORMAT " earliest %" GST_TIME_FORMAT, proportion,
                     diff, GST_TIME_ARGS(earliest));
  }
  if (GST_EVENT_TYPE(event) == GST_EVENT_RECONFIGURE) {
    // Downstream was relinked: retry after NOT_LINKED, as queue does.
    self->queue->relink();
  }
  return gst_pad_event_default(pad, parent, event);
}

/* ------------------------------------------------------------------------------------------ */
/* GObject / GstElement                                                                        */

static GstStateChangeReturn change_state_unguarded(GstElement* element, GstStateChange transition) {
  auto* self = GST_TACONITE_ADAFACE(element);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
    self->counters->processed = 0;
    self->counters->processing_ns = 0;
    self->counters->warmup_frames = 0;  // the task is not running
    self->counters->warmup_max = 0;
    self->counters->warmup_latency = 0;
    self->counters->qos_earliest = GST_CLOCK_TIME_NONE;
    if (!load_engine(self)) return GST_STATE_CHANGE_FAILURE;
  }
  const GstStateChangeReturn ret = GST_ELEMENT_CLASS(gst_taconite_adaface_parent_class)->change_state(element, transition);
  // The task is stopped once the pads are deactivated, so the engine is ours to drop.
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY ||
      (transition == GST_STATE_CHANGE_READY_TO_PAUSED && ret == GST_STATE_CHANGE_FAILURE))
    self->engine->set(nullptr);
  return ret;
}

/* ------------------------------------------------------------------------------------------ */
/* The C/C++ boundary: every function GStreamer calls turns a C++ exception into an element error */

static GstFlowReturn sink_chain(GstPad* pad, GstObject* parent, GstBuffer* buffer) {
  return flow_guarded(GST_ELEMENT(parent), "Could not queue a video buffer.",
                      [&] { return sink_chain_unguarded(pad, parent, buffer); });
}
static GstFlowReturn sink_event(GstPad* pad, GstObject* parent, GstEvent* event) {
  return flow_guarded(GST_ELEMENT(parent), "Could not handle an event.",
                      [&] { return sink_event_unguarded(pad, parent, event); });
}
static gboolean sink_query(GstPad* pad, GstObject* parent, GstQuery* query) {
  return bool_guarded(GST_ELEMENT(parent), "Could not answer a query.",
                      [&] { return sink_query_unguarded(pad, parent, query); });
}
static gboolean sink_activate_mode(GstPad* pad, GstObject* parent, GstPadMode mode, gboolean active) {
  return bool_guarded(GST_ELEMENT(parent), "Could not (de)activate the sink pad.",
                      [&] { return sink_activate_mode_unguarded(pad, parent, mode, active); });
}
static gboolean src_activate_mode(GstPad* pad, GstObject* parent, GstPadMode mode, gboolean active) {
  return bool_guarded(GST_ELEMENT(parent), "Could not (de)activate the source pad.",
                      [&] { return src_activate_mode_unguarded(pad, parent, mode, active); });
}
static gboolean src_query(GstPad* pad, GstObject* parent, GstQuery* query) {
  return bool_guarded(GST_ELEMENT(parent), "Could not answer a query.",
                      [&] { return src_query_unguarded(pad, parent, query); });
}
static gboolean src_event(GstPad* pad, GstObject* parent, GstEvent* event) {
  return bool_guarded(GST_ELEMENT(parent), "Could not handle an upstream event.",
                      [&] { return src_event_unguarded(pad, parent, event); });
}
static GstStateChangeReturn change_state(GstElement* element, GstStateChange transition) {
  return state_change_guarded(element, "Could not change the state of taconiteadaface.",
                              [&] { return change_state_unguarded(element, transition); });
}
// The task: after an exception (the error is posted) it pauses, as on a flow error.
static void src_loop(gpointer user_data) {
  auto* self = GST_TACONITE_ADAFACE(user_data);
  const GstFlowReturn ret = flow_guarded(GST_ELEMENT(self), "The streaming task of taconiteadaface failed.", [&] {
    src_loop_unguarded(user_data);
    return GST_FLOW_OK;
  });
  if (ret != GST_FLOW_OK) gst_pad_pause_task(self->srcpad);
}

// Every property, declared once; defaults are Settings{}'s (the queue's and the latency's, which
// live outside the settings with their own locks, are set in init).
static const PropertyTable<GstTaconiteAdaface, Settings>& properties() {
  using Self = GstTaconiteAdaface;
  static const auto table = [] {
    PropertyTable<Self, Settings> t(&Self::settings);
    constexpr Mutable ready = Mutable::ReadyOnly, any_time = Mutable::AnyTime;
    t.optional_string("bundle", "Bundle",
                      "Path of the AdaFace IR bundle directory (manifest.txt, tensors.txt, tensors.bin); loaded "
                      "when going from READY to PAUSED. Default: none (required)",
                      &Settings::bundle, ready);
    t.enumeration("backend", "Backend",
                  "Inference backend; 'auto' picks an NPU when one opens, else the fast CPU backend, else "
                  "cpu-reference. Default: auto",
                  taconite_backend_get_type, &Settings::backend, ready);
    t.integer("threads", "Threads",
              "CPU worker threads of the engine; 0 uses TACONITE_THREADS when set, else all cores. Default: 0", 0,
              taconite::kMaxThreads, &Settings::threads, ready);
    t.integer("sessions", "Sessions",
              "Sessions of the model the shared engine runs concurrently, one worker thread each (each "
              "call uses 'threads' threads); the first element to load the engine decides. More sessions "
              "add no throughput on NPU backends (one device queue). Default: 1",
              1, kMaxEngineSessions, &Settings::sessions, ready);
    t.enumeration("input-mode", "Input mode",
                  "What a face is: the face ROIs of the frame (rois; a frame without any gets no embedding), "
                  "the whole buffer as an aligned face crop (crops), or the ROIs when present else the whole "
                  "buffer as an unaligned face (auto). Default: rois",
                  taconite_input_mode_get_type, &Settings::input_mode, any_time);
    t.string("roi-type", "ROI type",
             "roi_type of the GstVideoRegionOfInterestMeta to embed (facedetect emits \"face\"). Default: \"face\"",
             &Settings::roi_type, any_time);
    t.uint("min-face-size", "Minimum face size",
           "ROIs whose smaller side is below this many pixels are not embedded; 0 embeds every ROI. Default: 0", 0,
           G_MAXUINT, &Settings::min_face_size, any_time);
    t.uint("max-faces", "Maximum faces",
           "Embed at most this many ROIs per frame, the largest ones; 0 means no limit. Default: 0", 0, G_MAXUINT,
           &Settings::max_faces, any_time);
    t.real("margin", "Margin",
           "Extra border around a ROI box on every side, as a fraction of the box's longer side, "
           "before the square crop is resized to the model input (rois mode). Default: 0",
           0.0, 1.0, &Settings::margin, any_time);
    t.enumeration("channel-order", "Channel order",
                  "Colour plane order fed to the network: auto (the bundle's param input_channel_order, rgb "
                  "when it has none), rgb, or bgr (for BGR-trained checkpoints). Default: auto",
                  taconite_channel_order_get_type, &Settings::channel_order, any_time);
    t.custom(
        [](GParamFlags flags) {
          return g_param_spec_uint("max-queued", "Maximum queued buffers",
                                   "Buffers waiting for the engine before upstream blocks (backpressure). Default: 8",
                                   1, G_MAXUINT, kDefaultMaxQueued, flags);
        },
        any_time, [](Self& self, Settings&, const GValue* v) { self.queue->set_max_queued(g_value_get_uint(v)); },
        [](Self& self, const Settings&, GValue* v) { g_value_set_uint(v, self.queue->max_queued()); }, Lock::Own);
    t.boolean("post-messages", "Post messages",
              "Post a 'taconiteadaface' element message per frame with running-time and each face's "
              "box, norm and embedding (GBytes of little-endian float32). Default: false",
              &Settings::post_messages, any_time);
    t.uint("batch-size", "Batch size",
           "Most faces per engine call, gathered across every element sharing the engine (same bundle "
           "and backend in this process); the oldest waiting request's value applies. Default: 1",
           1, 256, &Settings::batch_size, ready);
    t.uint("batch-timeout", "Batch timeout",
           "Microseconds the shared engine waits for other streams' faces before running a batch that "
           "is not full; it never waits when every stream sharing it already waits. Default: 0",
           0, 10000000, &Settings::batch_timeout_us, ready);
    t.custom(
        [](GParamFlags flags) {
          return g_param_spec_enum(
              "leaky", "Leaky",
              "What to do when the engine falls behind: 'no' blocks upstream; 'skip' passes frames beyond "
              "max-queued (and frames downstream QoS says are late) on without embeddings, flagged skipped, "
              "counted in faces-skipped, with a QoS message; video is never dropped. Default: no",
              taconite_leaky_get_type(), static_cast<gint>(kDefaultLeaky), flags);
        },
        any_time,
        [](Self& self, Settings&, const GValue* v) {
          self.queue->set_leaky_skip(static_cast<LeakyMode>(g_value_get_enum(v)) == LeakyMode::Skip);
        },
        [](Self& self, const Settings&, GValue* v) {
          g_value_set_enum(v, static_cast<gint>(self.queue->leaky_skip() ? LeakyMode::Skip : LeakyMode::No));
        },
        Lock::Own);
    t.uint("interval", "Interval",
           "Embed every Nth frame (counted from the stream start); the others pass on without embeddings. Default: 1",
           1, G_MAXUINT, &Settings::interval, any_time);
    t.string("track-id-param", "Track id param",
             "Where a ROI's tracking id is read: a ROI param structure of this name with an integer "
             "field \"id\" (DL Streamer), or an integer field of this name in any ROI param. Default: "
             "\"object_id\"",
             [](auto& s) -> auto& { return s.tracks.id_param; }, any_time);
    t.uint("reinfer-interval", "Re-inference interval",
           "Frames between two embeddings of the same track; in between the cached embedding is "
           "attached (status cached, with its age). 1 embeds every frame (no reuse). Default: 1",
           1, G_MAXUINT, [](auto& s) -> auto& { return s.tracks.reinfer_interval; }, any_time);
    t.real("reinfer-growth", "Re-inference growth",
           "Re-embed a track before reinfer-interval when its box area grew by more than this "
           "fraction since its last embedding (a closer, better view). Default: 0.2",
           0.0, 100.0, [](auto& s) -> auto& { return s.tracks.growth; }, any_time);
    t.boolean("track-best", "Keep the best embedding per track",
              "Cache the highest-norm (best quality) embedding of each track rather than the latest; "
              "enables track reuse even with reinfer-interval=1. Default: false",
              [](auto& s) -> auto& { return s.tracks.keep_best; }, any_time);
    t.uint("track-timeout", "Track timeout",
           "Forget a track's cached embedding when it was missing from more than this many consecutive "
           "frames (it survives a gap of exactly this many). Default: 30",
           0, G_MAXUINT, [](auto& s) -> auto& { return s.tracks.timeout; }, any_time);
    t.custom(
        [](GParamFlags flags) {
          return g_param_spec_enum(
              "reinfer-mode", "Re-inference mode",
              "When a tracked face is embedded again: interval (every reinfer-interval frames, or when its "
              "box grew) or best (only when its quality beats the track's best so far by best-margin, at "
              "most once every best-min-gap frames, never on a box the tracker predicted; the cache keeps "
              "the best face's embedding). Default: interval",
              taconite_reinfer_mode_get_type(), static_cast<gint>(ReinferMode::Interval), flags);
        },
        any_time,
        [](Self&, Settings& s, const GValue* v) {
          s.tracks.best = static_cast<ReinferMode>(g_value_get_enum(v)) == ReinferMode::Best;
        },
        [](Self&, const Settings& s, GValue* v) {
          g_value_set_enum(v, static_cast<gint>(s.tracks.best ? ReinferMode::Best : ReinferMode::Interval));
        });
    t.real("best-margin", "Best-shot margin",
           "reinfer-mode=best: re-embed a track when its face's quality exceeds the best embedded so "
           "far by more than this fraction (0.1: 10 %). Default: 0.1",
           0.0, 10.0, [](auto& s) -> auto& { return s.tracks.best_margin; }, any_time);
    t.uint("best-min-gap", "Best-shot minimum gap",
           "reinfer-mode=best: the embedding budget, frames at least between two embeddings of one "
           "track (a track of F frames gets at most 1 + F / best-min-gap). Default: 10",
           1, G_MAXUINT, [](auto& s) -> auto& { return s.tracks.best_min_gap; }, any_time);
    // The counters: atomics, read without the object lock.
    const auto counter = [&t](const char* name, const char* nick, const char* blurb,
                              std::atomic<guint64> Counters::*value) {
      t.read_only(
          [=](GParamFlags flags) { return g_param_spec_uint64(name, nick, blurb, 0, G_MAXUINT64, 0, flags); },
          [=](Self& self, const Settings&, GValue* v) { g_value_set_uint64(v, (self.counters->*value).load()); },
          Lock::Own);
    };
    counter("frames-in", "Frames in", "Buffers received on the sink pad since creation", &Counters::frames_in);
    counter("frames-out", "Frames out", "Buffers pushed on the src pad and accepted downstream since creation",
            &Counters::frames_out);
    counter("faces-embedded", "Faces embedded", "Faces embedded since creation", &Counters::faces_embedded);
    counter("faces-skipped", "Faces skipped",
            "Faces passed on without an embedding since creation: because the engine fell behind "
            "(leaky=skip), or because its output for the face held NaN or an infinity",
            &Counters::faces_skipped);
    counter("faces-cached", "Faces cached",
            "Faces given a tracked face's cached embedding instead of a new one since creation",
            &Counters::faces_cached);
    t.read_only(
        [](GParamFlags flags) {
          return g_param_spec_double("mean-latency-ms", "Mean latency",
                                     "Mean processing time per buffer in milliseconds (selection, preprocessing, "
                                     "engine, metadata) since the last READY to PAUSED",
                                     0.0, G_MAXDOUBLE, 0.0, flags);
        },
        [](Self& self, const Settings&, GValue* v) {
          const guint64 n = self.counters->processed.load();
          g_value_set_double(
              v, n ? static_cast<double>(self.counters->processing_ns.load()) / static_cast<double>(n) / 1e6 : 0.0);
        },
        Lock::Own);
    t.custom(
        [](GParamFlags flags) {
          return g_param_spec_uint64(
              "latency", "Latency",
              "Processing latency in nanoseconds added to LATENCY queries (how late a buffer may leave); "
              "0 = automatic: the slowest of the first 30 frames that ran the engine (the very first "
              "left out), reported once known with one LATENCY message. Default: 0",
              0, kMaxLatency, kDefaultLatency, flags);
        },
        any_time,
        [](Self& self, Settings&, const GValue* v) {
          // A new value is a new answer to LATENCY queries: ask the pipeline to query again.
          if (self.counters->latency.exchange(g_value_get_uint64(v)) != g_value_get_uint64(v))
            gst_element_post_message(GST_ELEMENT(&self), gst_message_new_latency(GST_OBJECT(&self)));
        },
        [](Self& self, const Settings&, GValue* v) { g_value_set_uint64(v, self.counters->latency.load()); },
        Lock::Own);
    return t;
  }();
  return table;
}

static void finalize(GObject* object) {
  auto* self = GST_TACONITE_ADAFACE(object);
  delete self->counters;
  delete self->stream;
  delete self->queue;
  delete self->engine;
  delete self->settings;
  G_OBJECT_CLASS(gst_taconite_adaface_parent_class)->finalize(object);
}

static void gst_taconite_adaface_init(GstTaconiteAdaface* self) {
  self->settings = new Settings();
  TaskControl task;
  task.start = [self] {
    return GST_PAD_MODE(self->srcpad) == GST_PAD_MODE_PUSH && gst_pad_start_task(self->srcpad, src_loop, self, nullptr);
  };
  task.pause = [self] { gst_pad_pause_task(self->srcpad); };
  self->queue = new ItemQueue(std::move(task));
  self->queue->set_max_queued(kDefaultMaxQueued);
  self->queue->set_leaky_skip(kDefaultLeaky == LeakyMode::Skip);
  self->engine = new EngineSlot();
  self->stream = new Stream();
  self->counters = new Counters();
  gst_video_info_init(&self->stream->info);
  gst_segment_init(&self->stream->segment, GST_FORMAT_TIME);

  self->sinkpad = gst_pad_new_from_static_template(&sink_template, "sink");
  gst_pad_set_chain_function(self->sinkpad, GST_DEBUG_FUNCPTR(sink_chain));
  gst_pad_set_event_full_function(self->sinkpad, GST_DEBUG_FUNCPTR(sink_event));
  gst_pad_set_query_function(self->sinkpad, GST_DEBUG_FUNCPTR(sink_query));
  gst_pad_set_activatemode_function(self->sinkpad, GST_DEBUG_FUNCPTR(sink_activate_mode));
  GST_PAD_SET_PROXY_CAPS(self->sinkpad);
  gst_element_add_pad(GST_ELEMENT(self), self->sinkpad);

  self->srcpad = gst_pad_new_from_static_template(&src_template, "src");
  gst_pad_set_activatemode_function(self->srcpad, GST_DEBUG_FUNCPTR(src_activate_mode));
  gst_pad_set_query_function(self->srcpad, GST_DEBUG_FUNCPTR(src_query));
  gst_pad_set_event_function(self->srcpad, GST_DEBUG_FUNCPTR(src_event));
  GST_PAD_SET_PROXY_CAPS(self->srcpad);
  gst_element_add_pad(GST_ELEMENT(self), self->srcpad);
}

static void gst_taconite_adaface_class_init(GstTaconiteAdafaceClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  gobject_class->finalize = finalize;
  element_class->change_state = GST_DEBUG_FUNCPTR(change_state);

  PropertyTable<GstTaconiteAdaface, Settings>::install(gobject_class, properties());

  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "AdaFace face embedder", "Filter/Analyzer/Video",
      "Computes AdaFace IR face embeddings for face crops or face ROIs on its own streaming thread and attaches them "
      "as GstTaconiteEmbeddingMeta, ROI params and optional messages",
      "taconite-adaface maintainers");

  gst_type_mark_as_plugin_api(taconite_input_mode_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(taconite_channel_order_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(taconite_backend_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(taconite_leaky_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(taconite_reinfer_mode_get_type(), static_cast<GstPluginAPIFlags>(0));
}

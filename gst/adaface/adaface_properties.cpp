// taconiteadaface's properties, declared once (gst/common/property_table.hpp).
#include "adaface_element.hpp"
#include "enums.hpp"
#include "shared_engine.hpp"

#define GST_CAT_DEFAULT taconite_adaface_debug

namespace taconite::gst::adaface {

// Every property, declared once; defaults are Settings{}'s (the queue's and the latency's, which
// live outside the settings with their own locks, are set in init).
void declare_properties(PropertyTable<GstTaconiteAdaface, Settings>& t) {
  using Self = GstTaconiteAdaface;
  constexpr Mutable ready = Mutable::ReadyOnly, any_time = Mutable::AnyTime;
  t.optional_string("model", "Model",
                    "The face embedder: an AdaFace IR bundle directory (manifest.txt, tensors.txt, tensors.bin) "
                    "or an ONNX file (run by opencv-dnn, described by model-proc); loaded when going from READY "
                    "to PAUSED. Default: none (required)",
                    &Settings::bundle, ready);
  t.optional_string("bundle", "Bundle", "Alias of 'model' (both set the same path). Default: none",
                    &Settings::bundle, ready);
  t.optional_string("model-proc", "Model description",
                    "The ONNX model's description (JSON, format taconite-embedder/1: input size, channel order, "
                    "mean, std, output, threshold); a bundle takes none. Default: none (the model's path with "
                    ".json for .onnx)",
                    &Settings::model_proc, ready);
  t.enumeration("backend", "Backend",
                "Inference backend; 'auto' picks, for a bundle, an NPU when one opens, else the fast CPU "
                "backend, else cpu-reference, and for an ONNX file opencv-dnn. Default: auto",
                taconite_backend_get_type, &Settings::backend, ready);
  t.enumeration("precision", "Precision",
                "Numerics of the cpu backend: auto (f32, bf16 or f32 on Winograd convs, whichever measured fastest at load; "
                "TACONITE_PRECISION when set), f32, bf16, or int8 (int8 convs calibrated at load: faster, "
                "cosine ~0.996-0.999 to f32 on real faces). Other backends keep their own; the first element "
                "to load a shared engine decides. Default: auto",
                taconite_precision_get_type, &Settings::precision, ready);
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
  t.uint("max-embeddings", "Maximum embeddings per frame",
         "At most this many faces go to the engine per frame (live cameras: one frame with several new "
         "faces would hold the stream for all their embeddings); faces without an embedding yet first, then "
         "the best-looking. The others wait for a later frame: their track's cached embedding is attached "
         "meanwhile, or, with none, they pass on skipped (counted in faces-skipped). 0 means no limit. Default: 0",
         0, 1024, &Settings::max_embeddings, any_time);
  t.boolean("async-tracks", "Embed tracked faces in the background",
            "Tracked faces (a track id, reinfer-mode interval or best) are embedded on a thread of the element's "
            "own: frames never wait for the engine for them and pass on with their track's latest embedding "
            "(cached, or skipped until it has one); a new embedding is attached to the track's next frame once "
            "computed (status computed there). At most 2 faces wait or run, one per track; a track's first "
            "embedding goes before re-embeddings, and a new track refused a place on 5 frames (both hold first "
            "embeddings) makes its next frame wait for one (new tracks are never left without an embedding). For live cameras under load (shorter "
            "gaps between analysed frames). Faces without a track are embedded on the frame as before. Default: "
            "false",
            &Settings::async_tracks, ready);
  t.real("margin", "Margin",
         "Extra border around a ROI box on every side, as a fraction of the box's longer side, "
         "before the square crop is resized to the model input (rois mode). Default: 0",
         0.0, 1.0, &Settings::margin, any_time);
  t.enumeration("channel-order", "Channel order",
                "Colour plane order fed to the network: auto (the model's: a bundle's param "
                "input_channel_order, rgb when it has none; an ONNX model's description), rgb, or bgr (for "
                "BGR-trained checkpoints; the mean and std stay the model's). Default: auto",
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
         "frames (it survives a gap of exactly this many). Only a fallback for tracks without taconitetrack's uid: "
         "a taconitetrack track is forgotten when taconitetrack ends it. Default: 30",
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
  t.enumeration("untracked", "Untracked faces",
                "Faces without a usable track id (no tracker upstream, a track taconitetrack has not confirmed "
                "yet, an id two ROIs of the frame share), which no embedding can be reused for: every-frame "
                "(embedded on every frame), measured (only on frames where the box was measured, not predicted "
                "by a tracker or carried by the detector's interval) or never (passed on without an embedding "
                "until the track has an id). Whole-buffer faces (crops) are always embedded. Default: every-frame",
                taconite_untracked_get_type, &Settings::untracked, any_time);
  t.real("best-margin", "Best-shot margin",
         "reinfer-mode=best: re-embed a track when its face's quality exceeds the best embedded so "
         "far by more than this fraction (0.1: 10 %). Default: 0.1",
         0.0, 10.0, [](auto& s) -> auto& { return s.tracks.best_margin; }, any_time);
  t.uint("best-min-gap", "Best-shot minimum gap",
         "reinfer-mode=best: the embedding budget, frames at least between two embeddings of one "
         "track (a track of F frames gets at most 1 + F / best-min-gap). Default: 10",
         1, G_MAXUINT, [](auto& s) -> auto& { return s.tracks.best_min_gap; }, any_time);
  // The counters: atomics, read without the object lock.
  t.counter("frames-in", "Frames in", "Buffers received on the sink pad since creation",
            [](Self& self) -> guint64 { return self.counters->frames_in; }, Lock::Own);
  t.counter("frames-out", "Frames out", "Buffers pushed on the src pad and accepted downstream since creation",
            [](Self& self) -> guint64 { return self.counters->frames_out; }, Lock::Own);
  t.counter("faces-embedded", "Faces embedded", "Faces embedded since creation",
            [](Self& self) -> guint64 { return self.counters->faces_embedded; }, Lock::Own);
  t.counter("faces-skipped", "Faces skipped",
            "Faces passed on without an embedding since creation: because the engine fell behind "
            "(leaky=skip), or because its output for the face held NaN or an infinity",
            [](Self& self) -> guint64 { return self.counters->faces_skipped; }, Lock::Own);
  t.counter("faces-cached", "Faces cached",
            "Faces given a tracked face's cached embedding instead of a new one since creation",
            [](Self& self) -> guint64 { return self.counters->faces_cached; }, Lock::Own);
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
}

}  // namespace taconite::gst::adaface

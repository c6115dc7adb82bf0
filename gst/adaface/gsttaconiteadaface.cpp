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

#include <memory>
#include <utility>

#include "adaface_element.hpp"
#include "cxx_boundary.hpp"
#include "debug_categories.hpp"
#include "video_formats.hpp"

#define GST_CAT_DEFAULT taconite_adaface_debug

using namespace taconite::gst;
using namespace taconite::gst::adaface;

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(TACONITE_ADAFACE_VIDEO_FORMATS)));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(TACONITE_ADAFACE_VIDEO_FORMATS)));

G_DEFINE_TYPE_WITH_CODE(GstTaconiteAdaface, gst_taconite_adaface, GST_TYPE_ELEMENT, taconite_debug_categories_init());
GST_ELEMENT_REGISTER_DEFINE(taconiteadaface, "taconiteadaface", GST_RANK_NONE, GST_TYPE_TACONITE_ADAFACE);

/* ------------------------------------------------------------------------------------------ */
/* The src-pad task (its work on buffers, events and queries: adaface_buffers.cpp)             */


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
    self->stream->async.clear();  // FLUSH_START dropped the background embedder's work
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
      self->engine->cancel();
      gst_pad_pause_task(self->srcpad);  // waits for the current iteration to finish
      GST_DEBUG_OBJECT(self, "flush started, task paused");
      return GST_FLOW_OK;
    }
    case GST_EVENT_FLUSH_STOP: {
      gst_pad_push_event(self->srcpad, event);
      self->counters->qos_earliest = GST_CLOCK_TIME_NONE;
      self->engine->resume();
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
  if (active) {
    // The task is not running: its state is ours to reset.
    GST_OBJECT_LOCK(self);  // src_query reads the caps
    self->stream->have_info = false;
    GST_OBJECT_UNLOCK(self);
    self->stream->frame_index = 0;
    self->stream->tracks.clear();
    self->stream->async.clear();
    self->stream->norms.clear();  // the next bundle may be another model
    self->stream->warned_non_finite = false;
    gst_segment_init(&self->stream->segment, GST_FORMAT_TIME);
    self->engine->resume();
    return self->queue->activate();
  }
  self->queue->set_flushing();
  // As on FLUSH_START: do not wait behind other streams' batches in the shared engine.
  self->engine->cancel();
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

  PropertyTable<GstTaconiteAdaface, Settings>::install(gobject_class, &GstTaconiteAdaface::settings, declare_properties);

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
  gst_type_mark_as_plugin_api(taconite_precision_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(taconite_leaky_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(taconite_reinfer_mode_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(taconite_untracked_get_type(), static_cast<GstPluginAPIFlags>(0));
}

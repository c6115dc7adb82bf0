// taconiteadaface: the src-pad task's work on buffers, events and queries, in stream order.
#include <gst/video/video.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>

#include "adaface_element.hpp"
#include "debug_categories.hpp"
#include "roi_track_param.hpp"
#include "tracks_ended.hpp"

#define GST_CAT_DEFAULT taconite_adaface_debug

namespace taconite::gst::adaface {

/* ------------------------------------------------------------------------------------------ */
/* The work done on the streaming thread                                                       */

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

// Embeds the buffer's faces with `client` and attaches the results; with `skip` the faces are only
// flagged skipped (no embedding). Sets `used_engine` when the engine ran. Returns the (possibly
// new) buffer, or nullptr after posting an error or when a flush cancelled the engine request.
// No exception (OpenCV, allocation) leaves the streaming thread: it becomes an element error.
static GstBuffer* embed_faces(GstTaconiteAdaface* self, EngineClient& client, GstBuffer* buffer, bool skip,
                              bool* used_engine) {
  try {
    return embed_frame_faces(self, client, buffer, skip, used_engine);
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
      st->async.clear();
      if (const std::shared_ptr<AsyncEmbedder> async = self->engine->async()) async->discard();
      st->warned_non_finite = false;
      break;
    case GST_EVENT_CUSTOM_DOWNSTREAM:
      // The ids are taconitetrack's, in the object_id param: another track-id-param holds other ids.
      if (const std::optional<TracksEnded> ended = tracks_ended(event)) {
        GST_OBJECT_LOCK(self);
        const bool ours = self->settings->tracks.id_param == kObjectIdParam;
        GST_OBJECT_UNLOCK(self);
        if (ours) {
          st->tracks.end(*ended);
          st->async.end(*ended);
          if (const std::shared_ptr<AsyncEmbedder> async = self->engine->async()) async->forget(*ended);
        }
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

#include "camera_output.hpp"

#include <utility>

GST_DEBUG_CATEGORY_EXTERN(taconite_camera_debug);
#define GST_CAT_DEFAULT taconite_camera_debug

namespace taconite::gst {

CameraOutput::~CameraOutput() {
  if (caps_) gst_caps_unref(caps_);
}

GstFlowReturn CameraOutput::push(CameraMailbox::Item item) {
  using Kind = CameraMailbox::Item::Kind;
  if (item.kind == Kind::FrameItem) return push_frame(std::move(item.frame));
  if (item.kind == Kind::EventItem) {
    if (!started_ || !item.event) return GST_FLOW_OK;
    // As a queue does, a refused event does not stop the stream (a flushing peer refuses it).
    gst_pad_push_event(pad_, item.event.release());
    discont_ = true;  // the only event: the camera was lost
    return GST_FLOW_OK;
  }
  if (!started_) start_stream(nullptr);
  gst_pad_push_event(pad_, gst_event_new_eos());
  return GST_FLOW_EOS;
}

// stream-start, the caps (when known) and a TIME segment from 0, in the order GStreamer expects.
void CameraOutput::start_stream(GstCaps* caps) {
  gchar* id = gst_pad_create_stream_id(pad_, element_, nullptr);
  gst_pad_push_event(pad_, gst_event_new_stream_start(id));
  g_free(id);
  if (caps) {
    gst_pad_push_event(pad_, gst_event_new_caps(caps));
    gst_caps_replace(&caps_, caps);
  }
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  gst_pad_push_event(pad_, gst_event_new_segment(&segment));
  started_ = true;
}

GstClockTime CameraOutput::running_time_of(const CameraFrame& frame) const {
  GstClock* clock = gst_element_get_clock(element_);
  if (!clock) return GST_CLOCK_TIME_NONE;
  const GstClockTime now = gst_clock_get_time(clock);
  gst_object_unref(clock);
  const GstClockTime base = gst_element_get_base_time(element_);
  const GstClockTime running = now > base ? now - base : 0;
  const std::int64_t waited = static_cast<std::int64_t>(gst_util_get_timestamp()) - frame.arrival_ns;
  const GstClockTime age = waited > 0 ? static_cast<GstClockTime>(waited) : 0;
  return running > age ? running - age : 0;
}

GstFlowReturn CameraOutput::push_frame(CameraFrame frame) {
  GstSample* sample = frame.sample.get();
  GstCaps* caps = gst_sample_get_caps(sample);
  GstBuffer* buffer = gst_sample_get_buffer(sample);
  if (!buffer) return GST_FLOW_OK;
  if (!started_) {
    start_stream(caps);
  } else if (caps && (!caps_ || !gst_caps_is_equal(caps, caps_))) {
    GST_DEBUG_OBJECT(element_, "caps now %" GST_PTR_FORMAT, static_cast<gpointer>(caps));
    gst_pad_push_event(pad_, gst_event_new_caps(caps));
    gst_caps_replace(&caps_, caps);
  }
  gst_buffer_ref(buffer);
  GstClockTime pts = live_ ? running_time_of(frame) : GST_BUFFER_PTS(buffer);
  frame.sample.reset();  // the buffer's only owner now: made writable without a copy
  buffer = gst_buffer_make_writable(buffer);
  if (live_) {
    // Never backwards, even when the clock and the arrival times disagree by a little.
    if (GST_CLOCK_TIME_IS_VALID(pts) && GST_CLOCK_TIME_IS_VALID(last_pts_) && pts <= last_pts_) pts = last_pts_ + 1;
    GST_BUFFER_PTS(buffer) = pts;
    GST_BUFFER_DTS(buffer) = GST_CLOCK_TIME_NONE;
    last_pts_ = pts;
  }
  if (std::exchange(discont_, false)) GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DISCONT);
  return gst_pad_push(pad_, buffer);
}

}  // namespace taconite::gst

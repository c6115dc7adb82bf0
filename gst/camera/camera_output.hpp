// taconitecamera's src pad side, run by its pad task: the stream's start (stream-start, caps,
// segment) before the first frame, new caps when a reconnected camera sends other ones, and each
// frame's timestamps. A live camera's frame is stamped with the running time at which it arrived
// (now minus the time it waited in the mailbox), so PTS keep counting across reconnections and
// downstream sees how old a frame is (the first frame after an outage is flagged DISCONT); a
// recording keeps its own timestamps.
#pragma once

#include <gst/gst.h>

#include "running_camera.hpp"

namespace taconite::gst {

class CameraOutput {
 public:
  CameraOutput(GstElement* element, GstPad* pad, bool live) : element_(element), pad_(pad), live_(live) {}
  ~CameraOutput();
  CameraOutput(const CameraOutput&) = delete;
  CameraOutput& operator=(const CameraOutput&) = delete;

  // Sends one item of the mailbox downstream; the flow of the push (GST_FLOW_EOS after the end).
  // An event before the first frame is dropped: nothing downstream has seen the camera yet.
  GstFlowReturn push(CameraMailbox::Item item);

 private:
  GstFlowReturn push_frame(CameraFrame frame);
  void start_stream(GstCaps* caps);
  GstClockTime running_time_of(const CameraFrame& frame) const;

  GstElement* element_;
  GstPad* pad_;
  const bool live_;
  bool started_ = false;
  GstCaps* caps_ = nullptr;  // the last caps sent
  GstClockTime last_pts_ = GST_CLOCK_TIME_NONE;
  bool discont_ = false;  // the next frame is the first after a camera-lost event
};

}  // namespace taconite::gst

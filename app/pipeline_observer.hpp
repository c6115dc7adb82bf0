// What taconite-run's components (MQTT/Home Assistant, snapshots, event history, the web page) are
// told about the running cameras. The runner owns the pipelines; components only observe them, through
// the elements' public outputs (taconitepublish's track events, the ROI metadata on frames, the
// taconite-camera bus messages): the application sits on top of the elements, never inside them.
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace taconite::app {

// One taconite-tracks/1 event (docs/tracks-message.md), parsed.
struct TrackEvent {
  std::string camera;       // the event's "stream"
  std::string kind;         // "new", "update" or "end"
  std::string uid;          // the track's unique id: the key a consumer stores events under
  std::int64_t track_id = 0;
  double epoch_s = 0;       // wall clock of the event, seconds since 1970 (from "utc")
  std::string label_state;  // "pending", "known", "unknown"; empty without taconiteidentify
  std::optional<std::string> label;
  std::optional<std::int64_t> label_id;
  std::optional<double> confidence;
  std::string reason;       // "end" only: lost, camera-lost, eos, stopped, ...
  double first_epoch_s = 0, last_epoch_s = 0;  // "end" only
  std::optional<double> dwell_s;               // "end" only
  std::int64_t frames = 0;                     // "end" only
  std::string document;     // the event exactly as taconitepublish wrote it (JSON)
};

enum class CameraState { Starting, Streaming, Lost, Stopped };

class PipelineObserver {
 public:
  virtual ~PipelineObserver() = default;
  // On the runner's main loop thread, in the order the camera's taconitepublish sent them.
  virtual void on_track_event(const TrackEvent&) {}
  // On the camera's streaming thread, for every frame leaving the chain (ROI metadata attached):
  // keep it short, copy what is kept, never block.
  virtual void on_frame(const std::string& /*camera*/, GstBuffer* /*frame*/, const GstVideoInfo& /*info*/) {}
  // On the main loop thread: a camera started, streams, was lost (detail: the reason) or stopped.
  virtual void on_camera_state(const std::string& /*camera*/, CameraState, const std::string& /*detail*/) {}
  // On the main loop thread, when a reload (SIGHUP) changed which cameras are enabled: all of them now,
  // in the config's order. Called after the cameras removed have stopped, before those added start.
  virtual void on_cameras_changed(const std::vector<std::string>& /*enabled*/) {}
  // On the main loop thread, once, when the runner stops (SIGTERM / SIGINT, or --once done): every
  // camera has stopped and its open tracks' end events were delivered. Publish "offline" here.
  virtual void on_stop() {}
};

}  // namespace taconite::app

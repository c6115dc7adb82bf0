// What the page's Cameras tab shows: each camera's state (from PipelineObserver::on_camera_state)
// and its last track event (on_track_event). Written on the runner's main loop, read by the web
// server's thread: guarded by a mutex. The number of cameras kept is bounded (names come from the
// config, but a bound costs nothing): beyond kMaxCameras new names are counted, not kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "pipeline_observer.hpp"

namespace taconite::app {

class LiveState {
 public:
  static constexpr std::size_t kMaxCameras = 1024;
  static constexpr std::size_t kMaxEventBytes = 64 * 1024;  // a longer event document is not kept

  void camera_state(const std::string& camera, CameraState state, const std::string& detail);
  void track_event(const TrackEvent& event);
  // A reload left only these cameras enabled: the others are no longer shown.
  void keep_cameras(const std::vector<std::string>& enabled);
  // [{"camera", "state", "detail", "since_epoch_s", "last_event": {...} or null}, ...] by name.
  std::string cameras_json() const;

 private:
  struct Camera {
    CameraState state = CameraState::Starting;
    std::string detail;
    double since_epoch_s = 0;
    std::string last_event;  // the event's document (JSON), empty before the first
  };
  Camera* camera(const std::string& name);  // nullptr beyond kMaxCameras

  mutable std::mutex mutex_;
  std::map<std::string, Camera> cameras_;
  std::size_t dropped_cameras_ = 0;
};

const char* camera_state_name(CameraState state);

}  // namespace taconite::app

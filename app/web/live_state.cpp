#include "live_state.hpp"

#include <algorithm>
#include <chrono>

#include "api_reply.hpp"
#include "json_parse.hpp"

namespace taconite::app {

const char* camera_state_name(CameraState state) {
  switch (state) {
    case CameraState::Starting: return "starting";
    case CameraState::Streaming: return "streaming";
    case CameraState::Lost: return "lost";
    case CameraState::Stopped: return "stopped";
  }
  return "unknown";
}

LiveState::Camera* LiveState::camera(const std::string& name) {
  auto it = cameras_.find(name);
  if (it != cameras_.end()) return &it->second;
  if (cameras_.size() >= kMaxCameras) {
    ++dropped_cameras_;
    return nullptr;
  }
  return &cameras_[name];
}

void LiveState::camera_state(const std::string& name, CameraState state, const std::string& detail) {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::lock_guard lock(mutex_);
  if (Camera* c = camera(name)) {
    c->state = state;
    c->detail = detail.substr(0, 1024);
    c->since_epoch_s = now;
  }
}

void LiveState::track_event(const TrackEvent& event) {
  std::lock_guard lock(mutex_);
  if (Camera* c = camera(event.camera))
    c->last_event = event.document.size() <= kMaxEventBytes ? event.document : std::string();
}

void LiveState::keep_cameras(const std::vector<std::string>& enabled) {
  std::lock_guard lock(mutex_);
  std::erase_if(cameras_, [&](const auto& camera) {
    return std::find(enabled.begin(), enabled.end(), camera.first) == enabled.end();
  });
}

std::string LiveState::cameras_json() const {
  std::lock_guard lock(mutex_);
  JsonText j;
  j.array();
  for (const auto& [name, c] : cameras_) {
    j.object().name("camera").value(name).name("state").value(camera_state_name(c.state));
    j.name("detail").value(c.detail).name("since_epoch_s").value(c.since_epoch_s).name("last_event");
    Result<json::JsonNodePtr> doc = c.last_event.empty() ? Result<json::JsonNodePtr>(Error{ErrorKind::Input, ""})
                                                         : json::parse_json(c.last_event);
    if (doc)
      j.raw(json_node_copy(doc.value().get()));
    else
      j.null();
    j.end_object();
  }
  j.end_array();
  return j.text();
}

}  // namespace taconite::app

// taconite-run's Home Assistant link (app/mqtt) as a component: HomeAssistantMqtt built from the
// config's `mqtt` section, told the gallery's people at start and whenever the gallery changes, and
// stopped (offline published) once every camera has stopped.
#pragma once

#include <memory>

#include "config.hpp"
#include "gallery_people.hpp"
#include "home_assistant.hpp"
#include "pipeline_observer.hpp"
#include "taconite/error.hpp"

namespace taconite::app {

class HomeAssistantComponent final : public PipelineObserver {
 public:
  // An error naming the mqtt key that is wrong (a credentials or TLS file, a camera name).
  static Result<std::unique_ptr<HomeAssistantComponent>> start(const Config& config);

  HomeAssistantMqtt& mqtt() { return *mqtt_; }

  void on_track_event(const TrackEvent& event) override { mqtt_->on_track_event(event); }
  void on_camera_state(const std::string& camera, CameraState state, const std::string& detail) override {
    mqtt_->on_camera_state(camera, state, detail);
  }
  // A reload added or removed cameras: their entities are made or deleted (set_cameras).
  void on_cameras_changed(const std::vector<std::string>& enabled) override;
  void on_stop() override { mqtt_->stop(); }

 private:
  explicit HomeAssistantComponent(std::unique_ptr<HomeAssistantMqtt> mqtt) : mqtt_(std::move(mqtt)) {}

  std::unique_ptr<HomeAssistantMqtt> mqtt_;
  std::unique_ptr<GalleryPeopleWatch> people_;  // destroyed first: it calls mqtt_
};

}  // namespace taconite::app

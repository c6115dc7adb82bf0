#include "home_assistant_component.hpp"

#include <glib.h>

#include "run_log.hpp"

namespace taconite::app {

Result<std::unique_ptr<HomeAssistantComponent>> HomeAssistantComponent::start(const Config& config) {
  const MqttConfig& m = config.mqtt;
  HomeAssistantOptions options;
  options.host = m.host;
  options.port = static_cast<int>(m.port);
  options.credentials_file = m.credentials_file;
  options.tls_ca = m.tls.ca_file;
  options.tls_cert = m.tls.cert_file;
  options.tls_key = m.tls.key_file;
  options.topic_prefix = m.topic_prefix;
  options.discovery_prefix = m.discovery_prefix;
  options.client_id = m.client_id.empty() ? std::string("taconite-run-") + g_get_host_name() : m.client_id;
  for (const CameraConfig& camera : config.cameras)
    if (camera.enabled) options.cameras.push_back(camera.name);
  if (!config.gallery.empty()) {
    std::string why;
    options.people = gallery_people(config.gallery, &why);
    if (!why.empty()) log_line("taconite-run: mqtt: no person sensors yet: " + why);
  }
  options.log = [](bool warning, const std::string& line) {
    log_line((warning ? "warning: mqtt: " : "mqtt: ") + line);
  };
  Result<std::unique_ptr<HomeAssistantMqtt>> mqtt = HomeAssistantMqtt::start(std::move(options));
  if (!mqtt) return Error{mqtt.error().kind, "mqtt: " + mqtt.error().message};
  std::unique_ptr<HomeAssistantComponent> component(new HomeAssistantComponent(std::move(mqtt.value())));
  if (!config.gallery.empty()) {
    HomeAssistantMqtt* target = component->mqtt_.get();
    component->people_ = std::make_unique<GalleryPeopleWatch>(
        config.gallery, [target](std::vector<std::string> people) { target->set_people(std::move(people)); });
  }
  return component;
}

void HomeAssistantComponent::on_cameras_changed(const std::vector<std::string>& enabled) {
  if (Status s = mqtt_->set_cameras(enabled); !s) log_line("taconite-run: mqtt: " + s.error().message);
}

}  // namespace taconite::app

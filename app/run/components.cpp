#include "components.hpp"

#include "events_file_observer.hpp"

namespace taconite::app {

Result<std::vector<std::unique_ptr<PipelineObserver>>> make_components(const Config& config) {
  std::vector<std::unique_ptr<PipelineObserver>> components;
  if (!config.storage.events_file.empty()) {
    Result<std::unique_ptr<EventsFileObserver>> events = EventsFileObserver::open(config.storage.events_file);
    if (!events) return events.error();
    components.push_back(std::move(events.value()));
  }
  // The integrator adds here: MQTT / Home Assistant (config.mqtt.enabled), snapshots
  // (config.storage.snapshots.dir), the event history (config.storage.events), the web page
  // (config.http.enabled).
  return components;
}

}  // namespace taconite::app

#include "components.hpp"

#include <functional>

#include "event_history.hpp"
#include "events_file_observer.hpp"
#if TACONITE_HAVE_MQTT
#include "home_assistant_component.hpp"
#endif
#include "run_log.hpp"
#include "snapshot_writer.hpp"
#include "track_event_log.hpp"
#if TACONITE_HAVE_WEB
#include "web_server.hpp"
#endif

namespace taconite::app {

namespace {

Error named(const char* key, const Error& error) { return Error{error.kind, std::string(key) + ": " + error.message}; }

#if TACONITE_HAVE_WEB
// The web page's events: the history's log, read on the page's worker threads (one connection each call).
EventSource event_source(const std::string& gallery_location) {
  return [gallery_location](const EventQuery& query) -> std::string {
    Result<gallery::TrackEventLog> log =
        gallery::TrackEventLog::open(gallery_location, gallery::TrackEventLog::Access::ReadOnly);
    if (!log) return "[]";  // no history yet: no events
    gallery::TrackEventFilter filter;
    filter.person = query.person;
    filter.camera = query.camera;
    if (query.since_epoch_s) filter.since_epoch_s = static_cast<double>(*query.since_epoch_s);
    filter.limit = query.limit;
    Result<std::vector<gallery::StoredTrackEvent>> events = log.value().query(filter);
    return events ? gallery::events_to_json(events.value()) : "[]";
  };
}

Result<std::unique_ptr<PipelineObserver>> web_page(const Config& config) {
  WebServerOptions options;
  options.listen = config.http.listen;
  options.credentials_file = config.http.credentials_file;
  options.gallery = config.gallery;
  options.model = config.model;
  options.model_proc = config.model_proc;
  options.backend = config.backend;
  options.detector = config.detector;
  options.snapshot_dir = config.storage.snapshots.dir;
  options.match_threshold = config.threshold;
  if (config.storage.events) options.events = event_source(config.gallery);
  Result<std::unique_ptr<WebServer>> started = WebServer::start(options);
  if (!started) return named("http", started.error());
  log_line("taconite-run: the web page is at " + started.value()->url());
  return std::unique_ptr<PipelineObserver>(std::move(started.value()));
}
#else
Result<std::unique_ptr<PipelineObserver>> web_page(const Config&) {
  return Error{ErrorKind::Input, "http: this build has no web page (it needs libsoup-3.0-dev: docs/install.md)"};
}
#endif

}  // namespace

// Made in dispatch order: the history sees an event before the snapshot made for it; the history and
// MQTT outlive the snapshot writer, which hands them the snapshots (the Runner destroys the last made first).
Result<std::vector<std::unique_ptr<PipelineObserver>>> make_components(const Config& config) {
  std::vector<std::unique_ptr<PipelineObserver>> components;
  if (!config.storage.events_file.empty()) {
    Result<std::unique_ptr<EventsFileObserver>> events = EventsFileObserver::open(config.storage.events_file);
    if (!events) return events.error();
    components.push_back(std::move(events.value()));
  }
  EventHistory* history = nullptr;
  if (config.storage.events) {
    EventHistoryOptions options;
    options.gallery = config.gallery;
    options.log = log_line;
    Result<std::unique_ptr<EventHistory>> started = EventHistory::start(std::move(options));
    if (!started) return named("storage.events", started.error());
    history = started.value().get();
    components.push_back(std::move(started.value()));
  }
  // Where a snapshot's picture goes besides its file: the MQTT snapshot topic.
  std::function<void(const std::string& camera, const std::string& uid, const std::vector<unsigned char>& jpeg)>
      publish_snapshot;
#if TACONITE_HAVE_MQTT
  if (config.mqtt.enabled) {
    Result<std::unique_ptr<HomeAssistantComponent>> started = HomeAssistantComponent::start(config);
    if (!started) return started.error();
    HomeAssistantMqtt* mqtt = &started.value()->mqtt();
    publish_snapshot = [mqtt](const std::string& camera, const std::string& uid,
                              const std::vector<unsigned char>& jpeg) {
      mqtt->publish_snapshot(camera, uid, std::string(jpeg.begin(), jpeg.end()));
    };
    components.push_back(std::move(started.value()));
  }
#else
  if (config.mqtt.enabled)
    return Error{ErrorKind::Input, "mqtt: this build has no MQTT (it needs libmosquitto-dev: docs/install.md)"};
#endif
  const SnapshotsConfig& snapshots = config.storage.snapshots;
  if (!snapshots.dir.empty()) {
    SnapshotOptions options;
    options.dir = snapshots.dir;
    options.max_width = static_cast<int>(snapshots.max_width);
    options.quality = static_cast<int>(snapshots.jpeg_quality);
    options.max_files = snapshots.max_count;
    options.max_bytes = snapshots.max_bytes;
    options.max_age_s = snapshots.max_age_days * 86400.0;
    options.log = log_line;
    options.on_snapshot = [history, publish_snapshot](const std::string& camera, const std::string& uid,
                                                      const std::string& kind, const std::filesystem::path& path,
                                                      const std::vector<unsigned char>& jpeg) {
      if (history) history->set_snapshot(uid, kind, path.string());
      if (publish_snapshot) publish_snapshot(camera, uid, jpeg);
    };
    Result<std::unique_ptr<SnapshotWriter>> started = SnapshotWriter::start(std::move(options));
    if (!started) return named("storage.snapshots", started.error());
    components.push_back(std::move(started.value()));
  }
  if (config.http.enabled) {
    Result<std::unique_ptr<PipelineObserver>> page = web_page(config);
    if (!page) return page.error();
    components.push_back(std::move(page.value()));
  }
  return components;
}

}  // namespace taconite::app

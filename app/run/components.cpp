#include "components.hpp"

#include "event_history.hpp"
#include "events_file_observer.hpp"
#include "run_log.hpp"
#include "snapshot_writer.hpp"

namespace taconite::app {

namespace {

void log_component(const std::string& line) { log_line(line); }

Error named(const char* key, const Error& error) { return Error{error.kind, std::string(key) + ": " + error.message}; }

}  // namespace

// Made in dispatch order: the history sees an event before the snapshot made for it, and outlives the
// snapshot writer, which hands it the snapshots' paths (the Runner destroys the last made first).
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
    options.log = log_component;
    Result<std::unique_ptr<EventHistory>> started = EventHistory::start(std::move(options));
    if (!started) return named("storage.events", started.error());
    history = started.value().get();
    components.push_back(std::move(started.value()));
  }
  const SnapshotsConfig& snapshots = config.storage.snapshots;
  if (!snapshots.dir.empty()) {
    SnapshotOptions options;
    options.dir = snapshots.dir;
    options.max_width = static_cast<int>(snapshots.max_width);
    options.quality = static_cast<int>(snapshots.jpeg_quality);
    options.max_files = snapshots.max_count;
    options.max_bytes = snapshots.max_bytes;
    options.max_age_s = snapshots.max_age_days * 86400.0;
    options.log = log_component;
    options.on_snapshot = [history](const std::string&, const std::string& uid, const std::string& kind,
                                    const std::filesystem::path& path, const std::vector<unsigned char>&) {
      if (history) history->set_snapshot(uid, kind, path.string());
    };
    Result<std::unique_ptr<SnapshotWriter>> started = SnapshotWriter::start(std::move(options));
    if (!started) return named("storage.snapshots", started.error());
    components.push_back(std::move(started.value()));
  }
  return components;
}

}  // namespace taconite::app

#include "runner.hpp"

#include <cstdio>
#include <set>

#include "run_log.hpp"
#include "track_event_parse.hpp"

namespace taconite::app {

namespace {

// taconitepublish's and taconitecamera's bus message names (gst/publish/gsttaconitepublish.h,
// gst/taconite/gsttaconitecamera.h): the app uses the elements' public messages, not their code.
constexpr const char* kPublishMessage = "taconite-publish";
constexpr const char* kCameraMessage = "taconite-camera";

std::string field(const GstStructure* s, const char* name) {
  const char* value = gst_structure_get_string(s, name);
  return value ? value : "";
}

const char* state_name(CameraState state) {
  switch (state) {
    case CameraState::Starting: return "starting";
    case CameraState::Streaming: return "streaming";
    case CameraState::Lost: return "lost";
    case CameraState::Stopped: return "stopped";
  }
  return "?";
}

std::string short_uid(const std::string& uid) { return uid.substr(0, 8); }

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", s);
  return text;
}

}  // namespace

Runner::Runner(Config config, std::vector<std::unique_ptr<PipelineObserver>> observers, RunnerOptions options,
               GMainLoop* loop)
    : config_(std::move(config)), observers_(std::move(observers)), options_(options), loop_(loop) {
  for (const auto& observer : observers_) observer_pointers_.push_back(observer.get());
}

Runner::~Runner() {
  stop();
  if (collect_source_) g_source_remove(collect_source_);
  finished_.clear();
  // Last made, first gone: a component may call an earlier one until it is destroyed (the snapshot
  // writer, finishing its queue, hands paths to the history and pictures to MQTT).
  observer_pointers_.clear();
  while (!observers_.empty()) observers_.pop_back();
}

std::size_t Runner::running_cameras() const { return cameras_.size(); }

void Runner::start() {
  std::size_t enabled = 0;
  for (const CameraConfig& camera : config_.cameras) {
    if (!camera.enabled) {
      log_line(camera.name + ": disabled in the config");
      continue;
    }
    ++enabled;
    start_camera(camera);
  }
  log_line("taconite-run: " + std::to_string(cameras_.size()) + " of " + std::to_string(enabled) +
           " enabled cameras started (" + config_.file + ")");
  check_once_done();
}

void Runner::start_camera(const CameraConfig& camera) {
  Result<std::unique_ptr<CameraPipeline>> built = CameraPipeline::build(
      config_, camera, observer_pointers_, [this](CameraPipeline& c, GstMessage* m) { on_message(c, m); });
  if (!built) {
    log_line(built.error().message);
    failed_ = true;
    camera_state(camera.name, CameraState::Stopped, built.error().message);
    return;
  }
  std::unique_ptr<CameraPipeline> pipeline = std::move(built.value());
  camera_state(camera.name, CameraState::Starting, camera.uri.empty() ? camera.device : camera.uri);
  log_line(camera.name + ": starting (" + (camera.uri.empty() ? camera.device : camera.uri) + ")");
  CameraPipeline* raw = pipeline.get();
  cameras_[camera.name] = std::move(pipeline);
  if (!raw->start()) {
    // The error message on the bus says why; it arrives through on_message and finishes the camera.
    log_line(camera.name + ": the pipeline did not start");
  }
}

void Runner::stop_camera(const std::string& name, const std::string& why) {
  auto found = cameras_.find(name);
  if (found == cameras_.end()) return;
  std::unique_ptr<CameraPipeline> camera = std::move(found->second);
  cameras_.erase(found);
  log_line(name + ": stopping (" + why + ")");
  camera->stop();  // its end events reach the observers here
  camera_state(name, CameraState::Stopped, why);
}

void Runner::camera_finished(CameraPipeline& camera) {
  if (!camera.running()) return;  // already being stopped: that path reports it
  auto found = cameras_.find(camera.name());
  if (found == cameras_.end() || found->second.get() != &camera) return;
  finished_.push_back(std::move(found->second));
  cameras_.erase(found);
  camera.stop();
  if (!collect_source_) collect_source_ = g_idle_add(&Runner::collect_finished, this);
}

gboolean Runner::collect_finished(gpointer data) {
  auto* self = static_cast<Runner*>(data);
  self->collect_source_ = 0;
  self->finished_.clear();
  return G_SOURCE_REMOVE;
}

void Runner::check_once_done() {
  if (!options_.once || stopping_ || !cameras_.empty()) return;
  log_line("taconite-run: every camera ended (--once)");
  stop();
}

void Runner::stop() {
  if (stopping_) return;
  stopping_ = true;
  std::vector<std::string> names;
  for (const auto& [name, camera] : cameras_) names.push_back(name);
  for (const std::string& name : names) stop_camera(name, "taconite-run stops");
  for (PipelineObserver* observer : observer_pointers_) {
    try {
      observer->on_stop();
    } catch (const std::exception& e) {
      log_line(std::string("taconite-run: a component failed at stop: ") + e.what());
    }
  }
  stopped_ = true;
  log_line("taconite-run: stopped");
  if (loop_) g_main_loop_quit(loop_);
}

void Runner::reload(Config config) {
  if (stopping_) return;  // a SIGHUP that arrives while stopping starts nothing
  const bool all = !same_pipeline_settings(config_, config);
  if (!(config_.mqtt == config.mqtt) || !(config_.http == config.http) || !(config_.storage == config.storage))
    log_line("reload: changes of mqtt, http or storage take effect when taconite-run is restarted");
  std::map<std::string, CameraConfig> old_enabled, wanted;
  for (const CameraConfig& camera : config_.cameras)
    if (camera.enabled) old_enabled[camera.name] = camera;
  for (const CameraConfig& camera : config.cameras)
    if (camera.enabled) wanted[camera.name] = camera;
  config_ = std::move(config);
  std::size_t stopped = 0, restarted = 0, started = 0;
  std::vector<std::string> running;
  for (const auto& [name, camera] : cameras_) running.push_back(name);
  std::set<std::string> to_start;
  for (const std::string& name : running) {
    auto want = wanted.find(name);
    if (want == wanted.end()) {
      stop_camera(name, "removed or disabled in the config");
      ++stopped;
    } else if (all || !(cameras_.at(name)->camera() == want->second)) {
      stop_camera(name, all ? "model, detector, gallery or threshold changed" : "its config changed");
      to_start.insert(name);
      ++restarted;
    }
  }
  cameras_changed(old_enabled, wanted);
  for (const auto& [name, camera] : wanted) {
    if (cameras_.contains(name)) continue;
    auto old = old_enabled.find(name);
    const bool is_new = old == old_enabled.end();
    if (to_start.contains(name) || is_new || all || !(old->second == camera)) {
      start_camera(camera);
      if (!to_start.contains(name)) ++started;
    }
  }
  log_line("reload: " + std::to_string(started) + " started, " + std::to_string(stopped) + " stopped, " +
           std::to_string(restarted) + " restarted, " +
           std::to_string(cameras_.size() - started - restarted) + " running unchanged");
}

void Runner::cameras_changed(const std::map<std::string, CameraConfig>& before,
                             const std::map<std::string, CameraConfig>& now) {
  std::vector<std::string> names;
  bool changed = before.size() != now.size();
  for (const auto& [name, camera] : now) changed = changed || !before.contains(name);
  if (!changed) return;
  for (const CameraConfig& camera : config_.cameras)
    if (camera.enabled) names.push_back(camera.name);
  for (PipelineObserver* observer : observer_pointers_) {
    try {
      observer->on_cameras_changed(names);
    } catch (const std::exception& e) {
      log_line(std::string("taconite-run: a component failed on the reloaded cameras: ") + e.what());
    }
  }
}

void Runner::camera_state(const std::string& camera, CameraState state, const std::string& detail) {
  for (PipelineObserver* observer : observer_pointers_) {
    try {
      observer->on_camera_state(camera, state, detail);
    } catch (const std::exception& e) {
      log_line(camera + ": a component failed on the camera's state " + state_name(state) + ": " + e.what());
    }
  }
}

void Runner::on_track_document(const std::string& document) {
  Result<TrackEvent> parsed = parse_track_event(document);
  if (!parsed) {
    log_line("taconite-run: a track event could not be read: " + parsed.error().message);
    return;
  }
  const TrackEvent& event = parsed.value();
  if (event.kind == "end") {
    log_line(event.camera + ": track " + short_uid(event.uid) + " ended (" + event.reason + "): " +
             event.label.value_or("-") + ", " + seconds(event.dwell_s.value_or(0)) + ", " +
             std::to_string(event.frames) + " frames");
  }
  for (PipelineObserver* observer : observer_pointers_) {
    try {
      observer->on_track_event(event);
    } catch (const std::exception& e) {
      log_line(event.camera + ": a component failed on a track event: " + e.what());
    }
  }
}

void Runner::on_element_message(CameraPipeline& camera, const GstStructure* s) {
  if (gst_structure_has_name(s, kPublishMessage)) {
    if (field(s, "kind") == "tracks") on_track_document(field(s, "document"));
    return;
  }
  if (!gst_structure_has_name(s, kCameraMessage)) return;
  const std::string state = field(s, "state");
  if (state == "lost") {
    const std::string detail = field(s, "reason") + ": " + field(s, "message");
    log_line(camera.name() + ": lost (" + detail + ")");
    camera_state(camera.name(), CameraState::Lost, detail);
  } else if (state == "back") {
    double outage = 0;
    gst_structure_get_double(s, "outage", &outage);
    log_line(camera.name() + ": back after " + seconds(outage));
    camera_state(camera.name(), CameraState::Streaming, "back after " + seconds(outage));
  } else if (state == "overloaded" || state == "keeping-up") {
    double decoded = 0, analysed = 0;
    gst_structure_get_double(s, "decoded-fps", &decoded);
    gst_structure_get_double(s, "analysed-fps", &analysed);
    char rates[96];
    std::snprintf(rates, sizeof rates, " (analysing %.1f of %.1f frames/s)", analysed, decoded);
    log_line(camera.name() + ": " + state + rates);
  }
}

void Runner::on_message(CameraPipeline& camera, GstMessage* message) {
  switch (GST_MESSAGE_TYPE(message)) {
    case GST_MESSAGE_ELEMENT:
      if (const GstStructure* s = gst_message_get_structure(message)) on_element_message(camera, s);
      break;
    case GST_MESSAGE_APPLICATION:
      if (gst_message_has_name(message, kFirstFrameMessage)) {
        log_line(camera.name() + ": streaming");
        camera_state(camera.name(), CameraState::Streaming, "first frame");
      }
      break;
    case GST_MESSAGE_EOS:
      if (!camera.running()) break;  // a stop in progress reports it
      log_line(camera.name() + ": ended (end of stream)");
      camera_finished(camera);
      camera_state(camera.name(), CameraState::Stopped, "eos");
      check_once_done();
      break;
    case GST_MESSAGE_ERROR: {
      GError* error = nullptr;
      gchar* debug = nullptr;
      gst_message_parse_error(message, &error, &debug);
      const std::string text = error ? error->message : "unknown error";
      log_line(camera.name() + ": error from " + GST_OBJECT_NAME(GST_MESSAGE_SRC(message)) + ": " + text +
               (debug ? std::string(" (") + debug + ")" : ""));
      g_clear_error(&error);
      g_free(debug);
      if (camera.running()) {
        failed_ = true;
        camera_finished(camera);
        camera_state(camera.name(), CameraState::Stopped, "error: " + text);
        check_once_done();
      }
      break;
    }
    case GST_MESSAGE_WARNING: {
      GError* error = nullptr;
      gst_message_parse_warning(message, &error, nullptr);
      // taconitecamera's lost warnings repeat its taconite-camera messages, logged above.
      if (error && std::string(GST_OBJECT_NAME(GST_MESSAGE_SRC(message))) != "camera")
        log_line(camera.name() + ": warning from " + GST_OBJECT_NAME(GST_MESSAGE_SRC(message)) + ": " + error->message);
      g_clear_error(&error);
      break;
    }
    default: break;
  }
}

}  // namespace taconite::app

// taconite-run's core: owns one CameraPipeline per enabled camera and the components
// (PipelineObservers), dispatches the pipelines' bus messages to them on the default main context,
// applies a reloaded config (restarting only the cameras whose config changed) and stops cleanly.
// Single-threaded: every call is made on the main loop's thread.
#pragma once

#include <glib.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "camera_pipeline.hpp"
#include "config.hpp"
#include "pipeline_observer.hpp"

namespace taconite::app {

struct RunnerOptions {
  bool once = false;  // quit when no camera runs any more (every recording reached EOS or failed)
};

class Runner {
 public:
  Runner(Config config, std::vector<std::unique_ptr<PipelineObserver>> observers, RunnerOptions options,
         GMainLoop* loop);
  ~Runner();  // stop()s
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Starts every enabled camera. A camera that cannot be built or started is logged and reported
  // Stopped; the others start.
  void start();
  // Applies a new, valid config: cameras added, removed, disabled or changed are started / stopped
  // / restarted; the others are not touched. Logs what it did.
  void reload(Config config);
  // Stops every camera (their open tracks end and reach the observers), calls on_stop() once and
  // quits the loop. Idempotent.
  void stop();

  // 0, or 1 when --once saw a camera fail.
  int exit_code() const { return failed_ ? 1 : 0; }
  std::size_t running_cameras() const;

 private:
  void start_camera(const CameraConfig& camera);
  void stop_camera(const std::string& name, const std::string& why);
  void on_message(CameraPipeline& camera, GstMessage* message);
  void on_element_message(CameraPipeline& camera, const GstStructure* s);
  void on_track_document(const std::string& document);
  void camera_state(const std::string& camera, CameraState state, const std::string& detail);
  // Tells the components the enabled cameras (config_'s) when a reload changed the set.
  void cameras_changed(const std::map<std::string, CameraConfig>& before,
                       const std::map<std::string, CameraConfig>& now);
  void camera_finished(CameraPipeline& camera);  // EOS or error: stopped now, freed from an idle callback
  void check_once_done();
  static gboolean collect_finished(gpointer self);

  Config config_;
  std::vector<std::unique_ptr<PipelineObserver>> observers_;
  std::vector<PipelineObserver*> observer_pointers_;
  RunnerOptions options_;
  GMainLoop* loop_;
  std::map<std::string, std::unique_ptr<CameraPipeline>> cameras_;
  std::vector<std::unique_ptr<CameraPipeline>> finished_;  // freed outside their own bus callback
  guint collect_source_ = 0;
  bool stopping_ = false, stopped_ = false, failed_ = false;
};

}  // namespace taconite::app

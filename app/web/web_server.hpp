// taconite-run's web page for the face library and the events (docs/app.md, "Web page"): a
// libsoup 3 HTTP server serving the page (embedded in the binary as a GResource) and its JSON API
// (api_routes.hpp), with the cameras' live state from the PipelineObserver calls.
//
// Threads: the server runs its own GMainContext on a thread of its own (not the runner's main
// loop), so a slow request never delays the pipelines' bus messages; API requests that touch the
// gallery or the model run on a pool of max_concurrent_recognitions worker threads (503 when
// max_queued_requests wait already). The observer calls may come from any thread.
//
// Authentication: HTTP Basic against the credentials file (owner-only) when one is given; start()
// refuses a listen address beyond loopback without one. Requests that change something (POST)
// carrying an Origin header must come from the page's own origin (no cross-site form posts).
#pragma once

#include <memory>
#include <string>

#include "pipeline_observer.hpp"
#include "taconite/error.hpp"
#include "web_options.hpp"

namespace taconite::app {

class WebServer : public PipelineObserver {
 public:
  // Loads the face library (gallery, model, detector), binds the address and starts serving.
  // Errors name the option, file or address that is wrong; nothing is left running on error.
  static Result<std::unique_ptr<WebServer>> start(const WebServerOptions& options);
  // Stops serving: in-flight requests finish, the thread is joined.
  ~WebServer() override;

  // The base URL it listens on, e.g. http://127.0.0.1:8765/ (the real port when given 0).
  const std::string& url() const;

  void on_track_event(const TrackEvent& event) override;
  void on_camera_state(const std::string& camera, CameraState state, const std::string& detail) override;
  void on_cameras_changed(const std::vector<std::string>& enabled) override;

  struct Impl;

 private:
  explicit WebServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace taconite::app

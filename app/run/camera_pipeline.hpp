// One camera's running pipeline: built from pipeline_words(), its bus watched on the default main
// context, a probe on the frames leaving the chain. Owned and driven by the Runner (main thread).
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config.hpp"
#include "pipeline_observer.hpp"
#include "taconite/error.hpp"

namespace taconite::app {

// The application message the frame probe posts (from the streaming thread) at the camera's first frame.
inline constexpr const char* kFirstFrameMessage = "taconite-run-first-frame";

class CameraPipeline {
 public:
  using MessageHandler = std::function<void(CameraPipeline&, GstMessage*)>;

  // Builds the pipeline (not started). `observers` get on_frame from the camera's streaming thread;
  // they and `handler` must outlive this object. An error naming the camera when it cannot be built.
  static Result<std::unique_ptr<CameraPipeline>> build(const Config& config, const CameraConfig& camera,
                                                       const std::vector<PipelineObserver*>& observers,
                                                       MessageHandler handler);
  ~CameraPipeline();  // stop()s
  CameraPipeline(const CameraPipeline&) = delete;
  CameraPipeline& operator=(const CameraPipeline&) = delete;

  // Sets PLAYING (asynchronous for a live camera); false when the state change failed at once.
  bool start();
  // Sets READY, so taconitepublish ends every open track (reason stopped) and posts the end events;
  // every message still on the bus is handed to the handler before this returns; then NULL. Idempotent.
  void stop();

  const CameraConfig& camera() const { return camera_; }
  const std::string& name() const { return camera_.name; }
  bool running() const { return pipeline_ != nullptr && !stopped_; }

 private:
  CameraPipeline(CameraConfig camera, MessageHandler handler) : camera_(std::move(camera)), handler_(handler) {}
  static gboolean on_bus(GstBus* bus, GstMessage* message, gpointer self);
  static GstPadProbeReturn on_probe(GstPad* pad, GstPadProbeInfo* info, gpointer self);

  CameraConfig camera_;
  MessageHandler handler_;
  std::vector<PipelineObserver*> observers_;
  GstElement* pipeline_ = nullptr;
  GstBus* bus_ = nullptr;
  bool stopped_ = false;
  // Streaming-thread state of the probe.
  GstVideoInfo info_{};
  bool info_known_ = false;
  bool first_frame_seen_ = false;
};

}  // namespace taconite::app

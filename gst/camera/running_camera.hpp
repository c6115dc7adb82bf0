// taconitecamera between start and stop: the supervisor thread, the current CameraSession and the
// mailbox its frames go through. The thread carries out what CameraSupervisor decides: it tears a
// failed or stalled source down and builds the next one after the backoff, says on the bus when the
// camera is lost and back (element messages "taconite-camera", a warning per outage), sends the
// camera-lost event downstream through the mailbox, gives up with an element error after
// max-retries failed attempts in a row, and with drop=latest says when the camera outruns the
// analysis (OverloadWatch: a warning and an "overloaded" message per episode, "keeping-up" after).
// Decoded frames go from the source's streaming thread through the max-rate gate straight into the
// mailbox; the element's src pad task takes them out.
#pragma once

#include <gst/gst.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "camera_session.hpp"
#include "camera_supervisor.hpp"
#include "output_mailbox.hpp"
#include "overload_watch.hpp"
#include "rate_gate.hpp"

namespace taconite::gst {

struct SampleUnref {
  void operator()(GstSample* sample) const { gst_sample_unref(sample); }
};
struct EventUnref {
  void operator()(GstEvent* event) const { gst_event_unref(event); }
};

// A decoded frame on its way out, with the monotonic time (ns) it arrived.
struct CameraFrame {
  std::unique_ptr<GstSample, SampleUnref> sample;
  std::int64_t arrival_ns = 0;
};
using CameraEvent = std::unique_ptr<GstEvent, EventUnref>;
using CameraMailbox = OutputMailbox<CameraFrame, CameraEvent>;

// The read-only properties; written by the camera's threads, read by the getters.
struct CameraStats {
  mutable std::mutex lock;
  std::uint64_t frames = 0, dropped = 0, skipped = 0, restarts = 0;  // skipped: by max-rate
  std::string last_error;
  CameraState state = CameraState::Stopped;
};

struct CameraConfig {
  std::string name;  // the `stream`: in every message and event
  SessionSettings session;
  SupervisorPolicy policy;
  bool keep_latest = true;  // drop=latest
  double max_rate = 0.0;    // frames a second let through (RateGate); 0: every frame
};

class RunningCamera {
 public:
  RunningCamera(GstElement* element, CameraConfig config, CameraStats& stats);
  ~RunningCamera();  // stop()
  RunningCamera(const RunningCamera&) = delete;
  RunningCamera& operator=(const RunningCamera&) = delete;

  void start();  // the supervisor thread: the first source starts at once
  void stop();   // the source stopped and the thread joined; idempotent

  CameraMailbox& mailbox() { return mailbox_; }
  bool live() const { return config_.session.uri.live; }

 private:
  struct Failure {
    std::uint64_t generation;
    LossCause cause;
    std::string message;
  };

  void run();
  void carry_out(const SupervisorActions& actions, std::uint64_t generation);
  void start_source(std::uint64_t generation);
  void on_frame(std::uint64_t generation, GstSample* sample);
  std::int64_t rate_time_ns(const CameraFrame& frame) const;
  void on_failure(std::uint64_t generation, LossCause cause, const std::string& message);
  void post_camera_message(const char* state, const SupervisorActions& actions);
  void announce_lost(const SupervisorActions& actions);
  void watch_load();
  void update_stats();

  GstElement* element_;
  const CameraConfig config_;
  CameraStats& stats_;
  CameraMailbox mailbox_;

  std::mutex lock_;  // guards what follows
  std::condition_variable changed_;
  CameraSupervisor supervisor_;
  std::uint64_t generation_ = 0;  // of the current source; callbacks of older ones are ignored
  RateGate rate_gate_;            // max-rate, reset for each source
  std::deque<Failure> failures_;
  bool stopping_ = false;
  std::unique_ptr<CameraSession> session_;  // the supervisor thread's only
  OverloadWatch overload_;                  // the supervisor thread's only
  std::thread thread_;
};

}  // namespace taconite::gst

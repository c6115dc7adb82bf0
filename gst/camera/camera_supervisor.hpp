// taconitecamera's supervision, without GStreamer: when to (re)start the source, when a camera
// counts as lost (an error, no frame for `timeout`, the end of a live stream) and back, and when to
// give up. The element feeds it what happens (a frame, a failure, the time passing) and carries out
// the actions it returns; every decision is here, so it is tested with plain time points.
//
//   Stopped --start--> Connecting --frame--> Streaming
//   Connecting / Streaming --error, stall, live EOS--> Retrying --delay--> Connecting
//                          --file EOS--> Ended     --max-retries failed in a row--> Failed
//
// One outage is one `lost` (at its first failure) and one `back` (at the first frame after it),
// however many attempts it takes. Retry n of an outage waits min(retry-interval, 0.5 s * 2^(n-1)).
// A recording (not live) is never retried: its error gives up at once, its EOS ends the stream,
// and no watchdog runs (a file's frames wait for downstream however slow it is).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace taconite::gst {

using SteadyTime = std::chrono::steady_clock::time_point;
using Seconds = std::chrono::duration<double>;

enum class CameraState { Stopped, Connecting, Streaming, Retrying, Failed, Ended };
const char* camera_state_name(CameraState state);  // "stopped", "connecting", ...

enum class LossCause { Error, Stall, Eos };
const char* loss_cause_name(LossCause cause);  // "error", "stall", "eos"

struct SupervisorPolicy {
  Seconds timeout{5.0};         // no frame for this long (connecting or streaming): a stall
  Seconds retry_interval{2.0};  // the longest wait between two attempts
  unsigned max_retries = 0;     // failed attempts in a row retried before giving up; 0: forever
  bool live = true;             // false: a recording (see above)
};

// How long retry `n` (from 1) of an outage waits.
Seconds retry_delay(const SupervisorPolicy& policy, unsigned n);

// What to do, in this order: stop the source, say lost / back / give up, start a source, end.
struct SupervisorActions {
  struct Lost {
    LossCause cause;
    std::string message;
  };
  bool stop_source = false;
  std::optional<Lost> lost;             // an outage began
  std::optional<Seconds> back;          // frames again, after an outage this long (last frame to first)
  std::optional<std::string> give_up;   // max-retries attempts failed in a row: the last error
  bool start_source = false;
  bool end_stream = false;              // a recording ended
};

class CameraSupervisor {
 public:
  explicit CameraSupervisor(SupervisorPolicy policy) : policy_(policy) {}

  SupervisorActions start(SteadyTime now);
  SupervisorActions frame(SteadyTime now);
  SupervisorActions failure(SteadyTime now, LossCause cause, const std::string& message);
  // Watchdog and retry timer: call at next_deadline() (earlier calls do nothing).
  SupervisorActions tick(SteadyTime now);
  // The source waits for downstream (drop=none with a slow consumer, a paused pipeline): no frame
  // is due meanwhile, the watchdog counts from the end of the wait.
  void hold(SteadyTime now, bool waiting);

  // When tick() has work next; SteadyTime::max() when none is pending.
  SteadyTime next_deadline() const;
  CameraState state() const { return state_; }
  std::uint64_t restarts() const { return restarts_; }
  const std::string& last_error() const { return last_error_; }

 private:
  SupervisorPolicy policy_;
  CameraState state_ = CameraState::Stopped;
  SteadyTime watched_since_{};   // the last frame, attempt start or end of a hold
  SteadyTime retry_at_{};
  std::optional<SteadyTime> outage_since_;  // set while lost
  bool holding_ = false;
  unsigned failures_in_row_ = 0;  // attempts that failed since the last frame
  std::uint64_t restarts_ = 0;
  std::string last_error_;
};

}  // namespace taconite::gst

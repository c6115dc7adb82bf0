#include "camera_supervisor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace taconite::gst {

namespace {

constexpr Seconds kFirstRetry{0.5};

bool running(CameraState state) { return state == CameraState::Connecting || state == CameraState::Streaming; }

}  // namespace

const char* camera_state_name(CameraState state) {
  switch (state) {
    case CameraState::Stopped: return "stopped";
    case CameraState::Connecting: return "connecting";
    case CameraState::Streaming: return "streaming";
    case CameraState::Retrying: return "retrying";
    case CameraState::Failed: return "failed";
    case CameraState::Ended: return "ended";
  }
  return "unknown";
}

const char* loss_cause_name(LossCause cause) {
  switch (cause) {
    case LossCause::Error: return "error";
    case LossCause::Stall: return "stall";
    case LossCause::Eos: return "eos";
  }
  return "unknown";
}

Seconds retry_delay(const SupervisorPolicy& policy, unsigned n) {
  const double doubling = std::ldexp(1.0, static_cast<int>(std::min(n, 40u)) - 1);  // 2^(n-1), bounded
  return std::min(policy.retry_interval, Seconds(kFirstRetry.count() * doubling));
}

SupervisorActions CameraSupervisor::start(SteadyTime now) {
  SupervisorActions actions;
  if (state_ != CameraState::Stopped) return actions;
  state_ = CameraState::Connecting;
  watched_since_ = now;
  outage_since_.reset();
  failures_in_row_ = 0;
  actions.start_source = true;
  return actions;
}

SupervisorActions CameraSupervisor::frame(SteadyTime now) {
  SupervisorActions actions;
  if (!running(state_)) return actions;  // a late frame of a source being torn down
  watched_since_ = now;
  failures_in_row_ = 0;
  if (state_ == CameraState::Connecting) {
    state_ = CameraState::Streaming;
    if (outage_since_) actions.back = now - *outage_since_;
    outage_since_.reset();
  }
  return actions;
}

SupervisorActions CameraSupervisor::failure(SteadyTime now, LossCause cause, const std::string& message) {
  SupervisorActions actions;
  if (!running(state_)) return actions;  // already handled: the source is stopped or being replaced
  actions.stop_source = true;
  if (cause == LossCause::Eos && !policy_.live) {
    state_ = CameraState::Ended;
    actions.end_stream = true;
    return actions;
  }
  last_error_ = message;
  if (!policy_.live) {  // a file does not come back
    state_ = CameraState::Failed;
    actions.give_up = message;
    return actions;
  }
  if (!outage_since_) {
    // Without frames since the last one (or since the start, for a camera never seen).
    outage_since_ = watched_since_;
    actions.lost = SupervisorActions::Lost{cause, message};
  }
  ++failures_in_row_;
  if (policy_.max_retries > 0 && failures_in_row_ > policy_.max_retries) {
    state_ = CameraState::Failed;
    actions.give_up = message;
    return actions;
  }
  state_ = CameraState::Retrying;
  retry_at_ = now + std::chrono::duration_cast<SteadyTime::duration>(retry_delay(policy_, failures_in_row_));
  return actions;
}

SupervisorActions CameraSupervisor::tick(SteadyTime now) {
  if (policy_.live && running(state_) && !holding_ && now - watched_since_ >= policy_.timeout) {
    char text[96];
    std::snprintf(text, sizeof text, "no frame for %.1f s", Seconds(now - watched_since_).count());
    return failure(now, LossCause::Stall, text);
  }
  SupervisorActions actions;
  if (state_ == CameraState::Retrying && now >= retry_at_) {
    state_ = CameraState::Connecting;
    watched_since_ = now;
    ++restarts_;
    actions.start_source = true;
  }
  return actions;
}

void CameraSupervisor::hold(SteadyTime now, bool waiting) {
  if (holding_ && !waiting) watched_since_ = std::max(watched_since_, now);
  holding_ = waiting;
}

SteadyTime CameraSupervisor::next_deadline() const {
  if (policy_.live && running(state_) && !holding_)
    return watched_since_ + std::chrono::duration_cast<SteadyTime::duration>(policy_.timeout);
  if (state_ == CameraState::Retrying) return retry_at_;
  return SteadyTime::max();
}

}  // namespace taconite::gst

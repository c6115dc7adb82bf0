#include "running_camera.hpp"

#include <gst/taconite/gsttaconitecamera.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>

GST_DEBUG_CATEGORY_EXTERN(taconite_camera_debug);
#define GST_CAT_DEFAULT taconite_camera_debug

namespace taconite::gst {

namespace {

constexpr std::size_t kMaxPendingFailures = 16;  // of one source: only the first one counts
constexpr std::chrono::seconds kLongestSleep{1};  // the thread looks at its state at least this often

SteadyTime now() { return std::chrono::steady_clock::now(); }

}  // namespace

RunningCamera::RunningCamera(GstElement* element, CameraConfig config, CameraStats& stats)
    : element_(element), config_(std::move(config)), stats_(stats), mailbox_(config_.keep_latest),
      supervisor_(config_.policy), rate_gate_(config_.max_rate) {}

RunningCamera::~RunningCamera() { stop(); }

void RunningCamera::start() {
  thread_ = std::thread([this] { run(); });
}

void RunningCamera::stop() {
  {
    std::lock_guard<std::mutex> guard(lock_);
    stopping_ = true;
  }
  changed_.notify_all();
  mailbox_.retire_before(std::numeric_limits<std::uint64_t>::max());  // no frame callback waits any more
  if (thread_.joinable()) thread_.join();
  session_.reset();
  std::lock_guard<std::mutex> guard(stats_.lock);
  stats_.state = CameraState::Stopped;
}

void RunningCamera::run() {
  std::unique_lock<std::mutex> guard(lock_);
  SupervisorActions actions = supervisor_.start(now());
  while (true) {
    const std::uint64_t generation = generation_;
    guard.unlock();
    update_stats();  // the properties say the new state before any message about it
    carry_out(actions, generation);
    watch_load();
    guard.lock();
    const SteadyTime deadline = std::min(supervisor_.next_deadline(), now() + kLongestSleep);
    changed_.wait_until(guard, deadline, [&] { return stopping_ || !failures_.empty(); });
    if (stopping_) break;
    actions = {};
    if (!failures_.empty()) {
      const Failure failure = std::move(failures_.front());
      failures_.pop_front();
      if (failure.generation == generation_) actions = supervisor_.failure(now(), failure.cause, failure.message);
    } else {
      actions = supervisor_.tick(now());
    }
    if (actions.stop_source) {
      ++generation_;  // the old source's callbacks are ignored from now on
      rate_gate_.reset();
    }
  }
  guard.unlock();
  session_.reset();  // the frame callbacks were retired by stop()
}

// On the supervisor thread, without the lock (tearing a source down waits for its threads, which
// take the lock in their callbacks).
void RunningCamera::carry_out(const SupervisorActions& actions, std::uint64_t generation) {
  // The bus hears of a loss before the old source is torn down: a teardown that stalls inside the
  // private pipeline must not hide the loss from the application.
  if (actions.lost) announce_lost(actions);
  if (actions.stop_source) {
    mailbox_.retire_before(generation);
    session_.reset();
  }
  if (actions.lost) {
    // Downstream, after the old source's last frame.
    if (GstEvent* event = gst_taconite_camera_lost_event_new(config_.name.c_str(), loss_cause_name(actions.lost->cause)))
      mailbox_.push_event(CameraEvent(event));
  }
  if (actions.give_up) {
    const unsigned attempts = config_.policy.max_retries + 1;
    if (config_.session.uri.live)
      GST_ELEMENT_ERROR(element_, RESOURCE, OPEN_READ,
                        ("Camera '%s' (%s): %u attempts in a row failed, giving up (max-retries=%u). Last error: %s",
                         config_.name.c_str(), config_.session.uri.uri.c_str(), attempts, config_.policy.max_retries,
                         actions.give_up->c_str()),
                        (nullptr));
    else
      GST_ELEMENT_ERROR(element_, RESOURCE, READ,
                        ("Camera '%s' (%s): %s", config_.name.c_str(), config_.session.uri.uri.c_str(),
                         actions.give_up->c_str()),
                        ("a recording is not retried"));
  }
  if (actions.start_source) start_source(generation);
  if (actions.end_stream) mailbox_.push_end();
}

// The `lost` message and warning of an outage.
void RunningCamera::announce_lost(const SupervisorActions& actions) {
  overload_.reset();  // the next source's rates are its own
  post_camera_message("lost", actions);
  const SupervisorPolicy& policy = config_.policy;
  const std::string retries = policy.max_retries == 0
                                  ? std::string("until it is back")
                                  : "up to " + std::to_string(policy.max_retries) + " times in a row";
  GST_ELEMENT_WARNING(element_, RESOURCE, READ,
                      ("Camera '%s' lost (%s): %s", config_.name.c_str(), loss_cause_name(actions.lost->cause),
                       actions.lost->message.c_str()),
                      ("%s: retrying every %.1f s at most, %s", config_.session.uri.uri.c_str(),
                       policy.retry_interval.count(), retries.c_str()));
}

void RunningCamera::start_source(std::uint64_t generation) {
  SessionCallbacks callbacks;
  callbacks.frame = [this, generation](GstSample* sample) { on_frame(generation, sample); };
  callbacks.failure = [this, generation](LossCause cause, const std::string& message) {
    on_failure(generation, cause, message);
  };
  Result<std::unique_ptr<CameraSession>> session = CameraSession::start(config_.session, std::move(callbacks),
                                                                        GST_OBJECT_NAME(element_));
  if (!session) {
    on_failure(generation, LossCause::Error, session.error().message);
    return;
  }
  GST_DEBUG_OBJECT(element_, "source %" G_GUINT64_FORMAT " started for %s", generation,
                   config_.session.uri.uri.c_str());
  session_ = std::move(session).value();
}

// The time max-rate spaces frames by: a live camera's arrival, a recording's own timestamps (so a
// file gives the same frames however fast it is read).
std::int64_t RunningCamera::rate_time_ns(const CameraFrame& frame) const {
  if (!config_.session.uri.live) {
    const GstBuffer* buffer = gst_sample_get_buffer(frame.sample.get());
    if (buffer && GST_BUFFER_PTS_IS_VALID(buffer)) return static_cast<std::int64_t>(GST_BUFFER_PTS(buffer));
  }
  return frame.arrival_ns;
}

// On the source's streaming thread.
void RunningCamera::on_frame(std::uint64_t generation, GstSample* sample) {
  CameraFrame frame;
  frame.sample.reset(sample);
  frame.arrival_ns = static_cast<std::int64_t>(gst_util_get_timestamp());
  SupervisorActions actions;
  bool state_changed = false;
  bool admitted = true;
  {
    std::lock_guard<std::mutex> guard(lock_);
    if (generation != generation_ || stopping_) return;  // a source being torn down
    const CameraState before = supervisor_.state();
    actions = supervisor_.frame(now());  // a frame max-rate skips still shows the camera is alive
    state_changed = supervisor_.state() != before;
    admitted = rate_gate_.admit(rate_time_ns(frame));
  }
  if (actions.back) {
    post_camera_message("back", actions);
    // gst-launch-1.0 prints an info message's debug text only: it says the same.
    GST_ELEMENT_INFO(element_, RESOURCE, READ,
                     ("Camera '%s' is back after %.1f s without frames", config_.name.c_str(), actions.back->count()),
                     ("Camera '%s' is back after %.1f s without frames", config_.name.c_str(), actions.back->count()));
  }
  {
    std::lock_guard<std::mutex> guard(stats_.lock);
    ++stats_.frames;
    if (!admitted) ++stats_.skipped;
  }
  if (!admitted) {
    if (state_changed) update_stats();
    return;
  }
  mailbox_.push_frame(std::move(frame), generation, [this](bool waiting) {
    std::lock_guard<std::mutex> guard(lock_);
    supervisor_.hold(now(), waiting);
  });
  if (state_changed) update_stats();
  std::lock_guard<std::mutex> guard(stats_.lock);
  stats_.dropped = mailbox_.dropped();
}

// On any thread: queued for the supervisor thread.
void RunningCamera::on_failure(std::uint64_t generation, LossCause cause, const std::string& message) {
  {
    std::lock_guard<std::mutex> guard(lock_);
    if (generation != generation_ || stopping_ || failures_.size() >= kMaxPendingFailures) return;
    failures_.push_back({generation, cause, message});
  }
  GST_DEBUG_OBJECT(element_, "source %" G_GUINT64_FORMAT ": %s: %s", generation, loss_cause_name(cause),
                   message.c_str());
  changed_.notify_all();
}

void RunningCamera::post_camera_message(const char* state, const SupervisorActions& actions) {
  guint64 restarts = 0;
  {
    std::lock_guard<std::mutex> guard(lock_);
    restarts = supervisor_.restarts();
  }
  GstStructure* s = gst_structure_new(GST_TACONITE_CAMERA_MESSAGE_NAME, "stream", G_TYPE_STRING, config_.name.c_str(),
                                      "state", G_TYPE_STRING, state, "restarts", G_TYPE_UINT64, restarts, nullptr);
  if (actions.lost)
    gst_structure_set(s, "reason", G_TYPE_STRING, loss_cause_name(actions.lost->cause), "message", G_TYPE_STRING,
                      actions.lost->message.c_str(), nullptr);
  if (actions.back) gst_structure_set(s, "outage", G_TYPE_DOUBLE, actions.back->count(), nullptr);
  gst_element_post_message(element_, gst_message_new_element(GST_OBJECT(element_), s));
}

// On the supervisor thread, about once a second: the decoded and dropped counts to OverloadWatch,
// and what it says to the bus (a warning and a message per episode, an info and a message after).
void RunningCamera::watch_load() {
  if (!config_.keep_latest) return;  // drop=none never drops: the source waits instead
  std::uint64_t offered = 0;  // decoded and not skipped by max-rate
  {
    std::lock_guard<std::mutex> guard(stats_.lock);
    offered = stats_.frames - stats_.skipped;
  }
  const std::optional<OverloadChange> change = overload_.sample(now(), offered, mailbox_.dropped());
  if (!change) return;
  GstStructure* s = gst_structure_new(GST_TACONITE_CAMERA_MESSAGE_NAME, "stream", G_TYPE_STRING, config_.name.c_str(),
                                      "state", G_TYPE_STRING, change->overloaded ? "overloaded" : "keeping-up",
                                      "decoded-fps", G_TYPE_DOUBLE, change->decoded_per_s, "analysed-fps",
                                      G_TYPE_DOUBLE, change->analysed_per_s, nullptr);
  if (!change->overloaded)
    gst_structure_set(s, "lasted", G_TYPE_DOUBLE, change->lasted.count(), "dropped", G_TYPE_UINT64,
                      static_cast<guint64>(change->dropped), nullptr);
  gst_element_post_message(element_, gst_message_new_element(GST_OBJECT(element_), s));
  if (change->overloaded)
    GST_ELEMENT_WARNING(element_, STREAM, FAILED,
                        ("%s: analysing %.0f of %.0f frames/s, dropping the rest", config_.name.c_str(),
                         change->analysed_per_s, change->decoded_per_s),
                        ("drop=latest hands the analysis the newest frame; the chain after the camera is slower "
                         "than it (frames-dropped counts the rest)"));
  else
    GST_ELEMENT_INFO(element_, STREAM, FAILED,
                     ("%s: keeping up again (%.0f frames/s) after %.1f s overloaded, %" G_GUINT64_FORMAT
                      " frames dropped",
                      config_.name.c_str(), change->decoded_per_s, change->lasted.count(),
                      static_cast<guint64>(change->dropped)),
                     ("%s: keeping up again after %.1f s overloaded", config_.name.c_str(), change->lasted.count()));
}

void RunningCamera::update_stats() {
  CameraState state;
  std::uint64_t restarts;
  std::string last_error;
  {
    std::lock_guard<std::mutex> guard(lock_);
    state = supervisor_.state();
    restarts = supervisor_.restarts();
    last_error = supervisor_.last_error();
  }
  std::lock_guard<std::mutex> guard(stats_.lock);
  stats_.state = state;
  stats_.restarts = restarts;
  stats_.last_error = std::move(last_error);
  stats_.dropped = mailbox_.dropped();
}

}  // namespace taconite::gst

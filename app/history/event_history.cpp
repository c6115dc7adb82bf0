#include "event_history.hpp"

#include <cmath>
#include <exception>
#include <utility>

#include "displayed_location.hpp"

namespace taconite::app {

namespace {

enum class Outcome { Stored, Refused, Away };

constexpr std::size_t kMaxDecidedTracks = 100000;

double wall_clock_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// An Input error is the event's own fault (retrying cannot help); anything else is the database's.
Outcome outcome_of(const Error& error) { return error.kind == ErrorKind::Input ? Outcome::Refused : Outcome::Away; }

}  // namespace

gallery::StoredTrackEvent stored_event(const TrackEvent& e, double now_epoch_s) {
  gallery::StoredTrackEvent s;
  s.epoch_s = e.epoch_s > 0 && std::isfinite(e.epoch_s) ? e.epoch_s : now_epoch_s;
  s.camera = e.camera;
  s.kind = e.kind;
  s.uid = e.uid;
  s.track_id = e.track_id;
  s.label_state = e.label_state;
  s.label = e.label;
  s.label_id = e.label_id;
  s.confidence = e.confidence;
  s.reason = e.reason;
  if (e.kind == "end") {
    s.first_epoch_s = e.first_epoch_s;
    s.last_epoch_s = e.last_epoch_s;
    s.dwell_s = e.dwell_s;
    s.frames = e.frames;
  }
  s.document = e.document;
  return s;
}

Result<std::unique_ptr<EventHistory>> EventHistory::start(EventHistoryOptions options) {
  if (options.gallery.empty()) return Error{ErrorKind::Input, "event history: no gallery given"};
  if (options.max_queue < 1 || options.max_queue > 1000000)
    return Error{ErrorKind::Input,
                 "event history: max_queue " + std::to_string(options.max_queue) + " is outside 1..1000000"};
  if (options.prune_every < 1) return Error{ErrorKind::Input, "event history: prune_every must be at least 1"};
  if (!std::isfinite(options.max_age_s) || options.max_age_s < 0)
    return Error{ErrorKind::Input, "event history: max_age_s must be finite and >= 0"};
  if (options.retry_interval.count() < 1 || options.flush_timeout.count() < 0)
    return Error{ErrorKind::Input, "event history: retry_interval must be positive, flush_timeout >= 0"};
  try {
    std::unique_ptr<EventHistory> history(new EventHistory(std::move(options)));
    history->worker_ = std::thread([h = history.get()] { h->run(); });
    return history;
  } catch (const std::exception& e) {  // std::system_error: no thread
    return Error{ErrorKind::Device, std::string("event history: cannot start its thread: ") + e.what()};
  }
}

EventHistory::EventHistory(EventHistoryOptions options) : options_(std::move(options)) {}

EventHistory::~EventHistory() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void EventHistory::say(const std::string& line) const {
  if (options_.log) options_.log(line);
}

void EventHistory::push(Item item) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(item));
    // A full queue loses its oldest event: the newest say who is here now.
    while (queue_.size() > options_.max_queue) {
      queue_.pop_front();
      ++stats_.dropped;
    }
  }
  wake_.notify_one();
}

void EventHistory::on_track_event(const TrackEvent& event) {
  try {
    Item item;
    item.event = stored_event(event, wall_clock_now());
    if (event.kind == "end") {
      decided_.erase(event.uid);
    } else if ((event.label_state == "known" || event.label_state == "unknown") && !decided_.contains(event.uid)) {
      if (decided_.size() >= kMaxDecidedTracks) decided_.clear();  // (tracks that never ended)
      decided_.insert(event.uid);
      item.decision = true;
    }
    push(std::move(item));
  } catch (const std::exception&) {  // std::bad_alloc: dropped, counted
    std::lock_guard lock(mutex_);
    ++stats_.dropped;
  }
}

void EventHistory::set_snapshot(const std::string& uid, const std::string& kind, const std::string& path) {
  if (kind != "end" && kind != "decided") return;
  const auto which = kind == "end" ? gallery::SnapshotOf::End : gallery::SnapshotOf::Decision;
  try {
    {
      std::lock_guard lock(mutex_);
      for (Item& item : queue_)
        if (item.event && item.event->uid == uid &&
            (which == gallery::SnapshotOf::End ? item.event->kind == "end" : item.decision)) {
          item.event->snapshot = path;
          ++stats_.snapshots;
          return;
        }
    }
    push(Item{std::nullopt, false, uid, path, which});
  } catch (const std::exception&) {
    std::lock_guard lock(mutex_);
    ++stats_.dropped;
  }
}

EventHistoryStats EventHistory::stats() const {
  std::lock_guard lock(mutex_);
  EventHistoryStats s = stats_;
  s.queued = queue_.size() + (in_flight_ ? 1 : 0);
  return s;
}

bool EventHistory::wait_idle(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return idle_.wait_for(lock, timeout, [&] { return queue_.empty() && !in_flight_; });
}

void EventHistory::run() {
  const std::string shown = gallery::displayed_location(options_.gallery);
  std::optional<gallery::TrackEventLog> log;
  bool away = false;
  std::size_t since_prune = 0;
  std::optional<std::chrono::steady_clock::time_point> flush_deadline;
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) {
      if (!flush_deadline) flush_deadline = std::chrono::steady_clock::now() + options_.flush_timeout;
      if (queue_.empty() || std::chrono::steady_clock::now() > *flush_deadline) break;
    }
    Item item = std::move(queue_.front());
    queue_.pop_front();
    in_flight_ = true;
    lock.unlock();

    Outcome outcome = Outcome::Away;
    std::string why;
    std::size_t pruned = 0;
    try {
      if (!log) {
        Result<gallery::TrackEventLog> opened = gallery::TrackEventLog::open(
            options_.gallery, gallery::TrackEventLog::Access::ReadWrite, options_.busy_timeout_ms);
        if (opened)
          log.emplace(std::move(opened.value()));
        else
          why = opened.error().message;
      }
      if (log) {
        if (item.event) {
          Result<std::int64_t> id = log->append(*item.event);
          outcome = id ? Outcome::Stored : outcome_of(id.error());
          if (!id) why = id.error().message;
        } else {
          Result<bool> set = log->set_snapshot(item.uid, item.which, item.snapshot);
          outcome = set ? Outcome::Stored : outcome_of(set.error());
          if (!set) why = set.error().message;
          if (set && !set.value()) outcome = Outcome::Refused;  // no event of the uid: nothing to update
        }
        if (outcome == Outcome::Stored && item.event && (options_.max_rows > 0 || options_.max_age_s > 0) &&
            ++since_prune >= options_.prune_every) {
          since_prune = 0;
          Result<std::size_t> removed = log->prune(options_.max_rows, options_.max_age_s, wall_clock_now());
          if (removed) pruned = removed.value();  // (a failed pass is retried after the next prune_every)
        }
      }
    } catch (const std::exception& e) {
      why = e.what();
      outcome = Outcome::Away;
    }

    std::string line;
    lock.lock();
    in_flight_ = false;
    stats_.pruned += pruned;
    if (outcome == Outcome::Away) {
      log.reset();  // reconnect on the retry
      stats_.connected = false;
      queue_.push_front(std::move(item));
      while (queue_.size() > options_.max_queue) {
        queue_.pop_front();  // the oldest, as push() drops: the retried one
        ++stats_.dropped;
      }
      if (!away) {
        away = true;
        ++stats_.outages;
        lock.unlock();
        say("event history: the event log of " + shown + " is away (" + why + "); events wait in memory (at most " +
            std::to_string(options_.max_queue) + ", the oldest dropped beyond) and are retried every " +
            std::to_string(options_.retry_interval.count()) + " ms");
        lock.lock();
      }
      if (stopping_) break;
      wake_.wait_for(lock, options_.retry_interval, [&] { return stopping_; });
      if (stopping_) break;
      continue;
    }
    if (away) {
      away = false;
      line = "event history: the event log of " + shown + " is back; " + std::to_string(stats_.dropped) +
             " event(s) dropped so far";
    }
    stats_.connected = true;
    if (outcome == Outcome::Stored) {
      if (item.event)
        ++stats_.appended;
      else
        ++stats_.snapshots;
    } else if (item.event) {
      // Refused: said for the first and then every 1000th, so a stream of bad events cannot flood the log.
      if (stats_.refused++ % 1000 == 0) line += (line.empty() ? "" : "; ") + ("event history: event refused: " + why);
    }
    if (queue_.empty()) idle_.notify_all();
    if (!line.empty()) {
      lock.unlock();
      say(line);
      lock.lock();
    }
  }
  const std::size_t left = queue_.size();
  idle_.notify_all();
  lock.unlock();
  if (left > 0)
    say("event history: " + std::to_string(left) + " event(s) not stored at shutdown (the event log of " + shown +
        " is away)");
}

}  // namespace taconite::app

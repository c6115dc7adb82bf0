// The event history of taconite-run: every track event (new, update, end) the cameras send is
// appended to the gallery's event log (gallery/track_event_log.hpp) by a worker thread, so the main
// loop never waits for the database.
//
// A database that is away (a server down, a file locked by another writer) is an outage: events
// wait in a bounded in-memory queue (max_queue; beyond it the oldest is dropped and counted), the
// write is retried every retry_interval, and the log callback is told once when the outage starts
// and once when it ends. An event the log refuses (a bound broken: track_event_log.hpp) is dropped
// and counted, not retried. Retention (max_rows, max_age_s) is applied after every
// prune_every-th append.
//
// Snapshots: set_snapshot(uid, kind, path) gives the event a snapshot was made for its path:
// kind "end", the track's end; "decided", its first event with a decided identity (new or update
// with label_state known or unknown: SnapshotWriter's rule). Still queued: attached; already
// stored: updated in the log. Register EventHistory before SnapshotWriter, so an event is seen
// before the snapshot made for it.
//
// A PostgreSQL server that does not answer at all holds the worker (not the main loop) in libpq's
// connect: set connect_timeout in the connection string to bound it.
//
// Thread-safety: on_track_event and set_snapshot on the main loop thread (set_snapshot from any
// thread); stats() from any thread. The destructor writes what is queued for at most
// flush_timeout, then stops the worker.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "pipeline_observer.hpp"
#include "track_event_log.hpp"

namespace taconite::app {

struct EventHistoryOptions {
  std::string gallery;            // the gallery's location (SQLite file or PostgreSQL string)
  std::size_t max_queue = 1000;   // events waiting for the database, 1..1000000
  std::size_t max_rows = 0;       // retention: events kept in the log (0: no bound)
  double max_age_s = 0;           // retention: oldest event kept, seconds (0: no bound)
  std::size_t prune_every = 100;  // appends between two retention passes (>= 1)
  std::chrono::milliseconds retry_interval{2000};
  std::chrono::milliseconds flush_timeout{2000};
  int busy_timeout_ms = 1000;  // SQLite: how long a write waits for another writer
  // Where the history's log lines go (the runner's logger); none: not logged.
  std::function<void(const std::string&)> log;
};

struct EventHistoryStats {
  std::uint64_t appended = 0;   // events stored
  std::uint64_t dropped = 0;    // dropped from a full queue (oldest first)
  std::uint64_t refused = 0;    // refused by the log (a bound broken)
  std::uint64_t snapshots = 0;  // snapshot paths attached or stored
  std::uint64_t outages = 0;    // times the database went away
  std::uint64_t pruned = 0;     // events removed by retention
  std::size_t queued = 0;       // waiting now
  bool connected = false;       // the log is open and the last write worked
};

// A TrackEvent as the log stores it (epoch_s 0: `now_epoch_s`).
gallery::StoredTrackEvent stored_event(const TrackEvent& event, double now_epoch_s);

class EventHistory final : public PipelineObserver {
 public:
  // Starts the worker, which opens the log; Input error for options outside their bounds.
  static Result<std::unique_ptr<EventHistory>> start(EventHistoryOptions options);
  ~EventHistory() override;
  EventHistory(const EventHistory&) = delete;
  EventHistory& operator=(const EventHistory&) = delete;

  void on_track_event(const TrackEvent& event) override;
  // kind: "decided" or "end" (anything else is ignored); any thread.
  void set_snapshot(const std::string& uid, const std::string& kind, const std::string& path);
  EventHistoryStats stats() const;
  // Waits until nothing is queued (true) or `timeout` passed (false). For tests and shutdown.
  bool wait_idle(std::chrono::milliseconds timeout) const;

 private:
  struct Item {
    std::optional<gallery::StoredTrackEvent> event;  // else a snapshot update:
    bool decision = false;                           // the event decided the track's identity
    std::string uid, snapshot;
    gallery::SnapshotOf which = gallery::SnapshotOf::End;
  };
  explicit EventHistory(EventHistoryOptions options);
  void run();
  void push(Item item);
  void say(const std::string& line) const;

  const EventHistoryOptions options_;
  mutable std::mutex mutex_;
  mutable std::condition_variable wake_, idle_;
  std::deque<Item> queue_;
  std::set<std::string> decided_;  // main loop thread: uids whose deciding event was seen
  bool in_flight_ = false;
  bool stopping_ = false;
  EventHistoryStats stats_;
  std::thread worker_;
};

}  // namespace taconite::app

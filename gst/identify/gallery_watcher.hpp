// Keeps taconiteidentify's gallery index current while the pipeline plays: a background thread
// polls the gallery every `poll_ms` (or wakes on reload()) and builds the new index off the
// streaming thread; the streaming thread only swaps a shared pointer, so a gallery change never
// stalls video. It notices a new revision, a file replaced by another (`mv new.db people.db`: a
// new device/inode, reopened and reloaded) and a file that is gone (one warning; the loaded index
// stays in use). An HNSW index that is not saved yet is built on this thread too: until it is
// ready the gallery is searched exactly. A reload that fails keeps the previous index and reports
// one warning until the problem changes. A PostgreSQL gallery has no file: a second thread
// listens for its change notifications (LISTEN/NOTIFY, on a connection of its own, reconnecting
// with a backoff of 0.5 s doubling to 30 s) and wakes the watcher, which then reads the revision;
// the poll stays as the fallback. A database that goes away is an outage: one Warning, the loaded
// index stays in use, the watcher tries again with the same backoff (not at every poll; reload()
// still tries at once), and when the database answers again one Info, then the revision tells
// whether changes were made meanwhile. Only the watcher's threads ever wait on the database.
// A gallery above approximate-above in a build without FAISS is searched exactly, with one
// Warning saying so (the first time it is that large).
// Messages name the gallery without its password (displayed_location.hpp).
// No exception leaves the threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "file_identity.hpp"
#include "gallery_index.hpp"

namespace taconite::gst {

class GalleryWatcher {
 public:
  // What a report is: a reload that succeeded (Note, for the log), a reload that failed or needs
  // attention, or a PostgreSQL gallery that became unreachable (Warning), or one reachable again
  // after an outage (Info).
  enum class Level { Note, Warning, Info };
  // Called from the watcher's thread.
  using Report = std::function<void(Level level, const std::string& message)>;

  GalleryWatcher(std::filesystem::path path, gallery::IndexOptions options, unsigned poll_ms, Report report);
  ~GalleryWatcher();  // cancels an HNSW build in progress, joins the thread
  GalleryWatcher(const GalleryWatcher&) = delete;
  GalleryWatcher& operator=(const GalleryWatcher&) = delete;

  // Loads the gallery now (on the caller's thread: a missing, corrupt or foreign gallery fails the
  // start) and, when it is `required` to be of a model, checks the fingerprint; then starts the
  // thread. Never builds an HNSW index here: a gallery whose saved index is missing or stale is
  // searched exactly until the thread has built it.
  gallery::Status start(const std::optional<gallery::ModelFingerprint>& required, std::string* note);
  // Asks the thread to re-read the gallery now (even when its revision did not change).
  void reload();
  // The current index; never null after a successful start().
  std::shared_ptr<const gallery::GalleryIndex> current() const;

 private:
  void run();
  void listen();  // the PostgreSQL change listener's thread
  void wait_unless_stopping(unsigned ms);
  void step(bool force);
  bool reachable();  // a PostgreSQL gallery: does the database answer (after a failed refresh)?
  void report(Level level, const std::string& message);
  gallery::Status open_store();
  Result<bool> refresh(bool force);  // true when a new index was installed
  Result<bool> reopen_if_replaced();
  void build_approximate();          // replaces an exact stand-in by its HNSW index
  void install(gallery::GalleryIndex index, const std::string& note);
  void warn_once_if_exact_only(const gallery::GalleryIndex& index);

  const std::filesystem::path path_;
  const std::string shown_;  // path_ for messages (displayed_location: no password)
  gallery::IndexOptions options_;  // defer_approximate, cancel = &stopping_
  const unsigned poll_ms_;
  const Report report_;
  // The watcher thread's connection and the file it opened.
  std::optional<gallery::GalleryStore> store_;
  std::optional<gallery::FileIdentity> opened_;
  std::string last_problem_;  // a lasting problem is reported once, not on every poll
  std::int64_t failed_build_revision_ = -1;
  bool warned_exact_only_ = false;  // (start(), then the thread)
  // A PostgreSQL gallery that cannot be reached: an outage, retried after retry_ms_ (doubling).
  bool unreachable_ = false;
  unsigned retry_ms_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false, forced_ = false;
  bool notified_ = false;  // the listener heard of a change: refresh (without forcing a reload)
  std::atomic<bool> stopping_{false};
  std::shared_ptr<const gallery::GalleryIndex> index_;
  std::thread thread_;
  std::thread listener_;  // PostgreSQL galleries only
};

}  // namespace taconite::gst

#include "gallery_watcher.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>

#include "displayed_location.hpp"

namespace taconite::gst {

namespace {

// The PostgreSQL reconnection backoff (the loader's and the listener's): soon after a short
// hiccup, rarely during a long outage.
constexpr unsigned kFirstBackoffMs = 500, kMaxBackoffMs = 30000;

unsigned next_backoff(unsigned ms) { return std::min(ms * 2, kMaxBackoffMs); }

}  // namespace

GalleryWatcher::GalleryWatcher(std::filesystem::path path, gallery::IndexOptions options, unsigned poll_ms,
                               Report report)
    : path_(std::move(path)),
      shown_(gallery::displayed_location(path_.string())),
      options_(options), poll_ms_(poll_ms), report_(std::move(report)) {
  options_.defer_approximate = true;
  options_.cancel = &stopping_;
  retry_ms_ = kFirstBackoffMs;
}

GalleryWatcher::~GalleryWatcher() {
  stopping_ = true;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (listener_.joinable()) listener_.join();
  if (thread_.joinable()) thread_.join();
}

// Stats the path before opening it: if the file is replaced in between, the next poll sees
// another id than the recorded one and reopens (once more than needed, never once too few).
gallery::Status GalleryWatcher::open_store() {
  int error = 0;
  const std::optional<gallery::FileIdentity> named = gallery::file_identity(path_, error);  // else the open says why
  Result<gallery::GalleryStore> store = gallery::GalleryStore::open(path_, gallery::GalleryStore::Access::ReadOnly);
  if (!store) return store.error();
  store_.reset();
  store_.emplace(std::move(store.value()));
  opened_ = named;
  return gallery::Ok{};
}

gallery::Status GalleryWatcher::start(const std::optional<gallery::ModelFingerprint>& required, std::string* note) {
  if (gallery::Status opened = open_store(); !opened) return opened.error();
  if (required)
    if (gallery::Status s = store_->check_model(*required); !s) return s.error();
  Result<gallery::GalleryIndex> index = gallery::GalleryIndex::load(*store_, options_, note);
  if (!index) return index.error();
  warn_once_if_exact_only(index.value());
  index_ = std::make_shared<const gallery::GalleryIndex>(std::move(index.value()));
  thread_ = std::thread([this] { run(); });
  if (store_->remote()) listener_ = std::thread([this] { listen(); });
  return gallery::Ok{};
}

void GalleryWatcher::reload() {
  {
    std::lock_guard lock(mutex_);
    forced_ = true;
  }
  wake_.notify_all();
}

std::shared_ptr<const gallery::GalleryIndex> GalleryWatcher::current() const {
  std::lock_guard lock(mutex_);
  return index_;
}

void GalleryWatcher::warn_once_if_exact_only(const gallery::GalleryIndex& index) {
  if (!index.approximate_unsupported() || warned_exact_only_) return;
  warned_exact_only_ = true;
  report(Level::Warning, shown_ + ": " + std::to_string(index.templates()) + " templates, above approximate-above " +
                             std::to_string(options_.approximate_above) +
                             ", but this taconite was built without FAISS: searching exactly (always right, slower; "
                             "rebuild with libfaiss-dev and -Dfaiss=enabled for the HNSW index)");
}

void GalleryWatcher::install(gallery::GalleryIndex index, const std::string& note) {
  warn_once_if_exact_only(index);
  const bool skipped = index.skipped_templates() > 0;
  const std::string message = "gallery revision " + std::to_string(index.revision()) + ": " + note;
  auto fresh = std::make_shared<const gallery::GalleryIndex>(std::move(index));
  {
    std::lock_guard lock(mutex_);
    index_ = std::move(fresh);
  }
  report(skipped ? Level::Warning : Level::Note, message);
}

void GalleryWatcher::report(Level level, const std::string& message) {
  try {
    report_(level, message);
  } catch (...) {  // a report that cannot be made (out of memory) is dropped, the thread goes on
  }
}

// A gallery file replaced under its name (or a store lost before) is opened again: true then.
Result<bool> GalleryWatcher::reopen_if_replaced() {
  int error = 0;
  const std::optional<gallery::FileIdentity> named = gallery::file_identity(path_, error);
  if (!named) {
    if (error == ENOENT)
      return Error{ErrorKind::Io, shown_ +
                                      ": the gallery file is gone (deleted or moved away); still searching "
                                      "the gallery as loaded (revision " +
                                      std::to_string(current()->revision()) + ") until a file is there again"};
    return Error{ErrorKind::Io, shown_ + ": " + std::strerror(error)};
  }
  if (store_ && opened_ == named) return false;
  // Another file under the name (an atomic replace), or the connection failed before: reopen.
  if (gallery::Status opened = open_store(); !opened) return opened.error();
  return true;
}

Result<bool> GalleryWatcher::refresh(bool force) {
  const bool remote = gallery::is_postgres_location(path_.string());
  if (remote) {
    // No file to watch: the revision tells, also after a reconnection (the same database; the
    // changes made while it was out of reach have bumped it).
    if (!store_)
      if (gallery::Status opened = open_store(); !opened) return opened.error();
  } else if (Result<bool> reopened = reopen_if_replaced(); !reopened) {
    return reopened.error();
  } else if (reopened.value()) {
    force = true;
  }
  Result<std::int64_t> revision = store_->revision();
  if (!revision) {
    store_.reset();
    return revision.error();
  }
  if (!force && revision.value() == current()->revision()) return false;
  std::string note;
  Result<gallery::GalleryIndex> index = gallery::GalleryIndex::load(*store_, options_, &note);
  if (!index) {
    if (!remote) store_.reset();  // (a PostgreSQL connection is judged by reachable())
    return index.error();
  }
  if (index.value().model_fingerprint() != current()->model_fingerprint())
    return Error{ErrorKind::Input, shown_ + ": the gallery now belongs to another model (" +
                                       index.value().model() + "); keeping the previous one"};
  install(std::move(index.value()), note);
  return true;
}

void GalleryWatcher::build_approximate() {
  const std::shared_ptr<const gallery::GalleryIndex> stand_in = current();
  if (!stand_in->approximate_pending() || stand_in->revision() == failed_build_revision_ || !store_) return;
  gallery::IndexOptions full = options_;
  full.defer_approximate = false;
  std::string note;
  Result<gallery::GalleryIndex> index = gallery::GalleryIndex::load(*store_, full, &note);
  if (!index) {
    if (index.error().message == gallery::kIndexBuildCancelled) return;
    failed_build_revision_ = stand_in->revision();  // not retried until the gallery changes
    throw std::runtime_error(shown_ + ": the HNSW index could not be built, searching exactly: " +
                             index.error().message);
  }
  // A gallery changed during the build is picked up by the next poll (and built again).
  if (index.value().revision() == current()->revision()) install(std::move(index.value()), note);
}

// A read of a PostgreSQL gallery failed: the database's fault (gone, refusing) or the data's? A
// trivial query on the connection tells; a connection that does not answer is dropped.
bool GalleryWatcher::reachable() {
  if (store_ && store_->revision()) return true;
  store_.reset();
  return false;
}

// One poll: a reload when due, then a pending HNSW build; a problem is reported once, an outage
// of a PostgreSQL gallery once when it starts and once when it ends.
void GalleryWatcher::step(bool force) {
  std::string problem;
  bool outage = false;
  try {
    Result<bool> refreshed = refresh(force);
    if (!refreshed) {
      problem = refreshed.error().message;
      outage = gallery::is_postgres_location(path_.string()) && !reachable();
    }
    if (problem.empty()) build_approximate();
  } catch (const std::exception& e) {
    problem = e.what();
  } catch (...) {
    problem = shown_ + ": unexpected failure while reloading the gallery";
  }
  if (outage) {
    if (!unreachable_) {
      // The cause names the gallery already: said once, at the front.
      const std::string prefix = shown_ + ": ";
      const std::string cause = problem.starts_with(prefix) ? problem.substr(prefix.size()) : problem;
      report(Level::Warning, prefix + "the gallery is unreachable; identification continues on revision " +
                                 std::to_string(current()->revision()) +
                                 " (tried again after 0.5 s, then at doubling intervals up to 30 s): " + cause);
    }
    if (unreachable_) retry_ms_ = next_backoff(retry_ms_);  // (the first retry comes after kFirstBackoffMs)
    unreachable_ = true;
    return;
  }
  if (unreachable_) {
    unreachable_ = false;
    retry_ms_ = kFirstBackoffMs;
    last_problem_.clear();
    report(Level::Info, shown_ + ": the gallery is reachable again; identifying with revision " +
                            std::to_string(current()->revision()));
  }
  if (!problem.empty() && problem != last_problem_) report(Level::Warning, problem);
  last_problem_ = problem;
}

void GalleryWatcher::run() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    const bool build_due = index_->approximate_pending() && index_->revision() != failed_build_revision_ &&
                           last_problem_.empty() && !unreachable_;
    if (build_due)
      ;  // no wait: the exact stand-in should be replaced as soon as possible
    else if (unreachable_)  // the backoff, whatever the poll: a gone database is not hammered
      wake_.wait_for(lock, std::chrono::milliseconds(retry_ms_), [this] { return stop_ || forced_ || notified_; });
    else if (poll_ms_ > 0)
      wake_.wait_for(lock, std::chrono::milliseconds(poll_ms_), [this] { return stop_ || forced_ || notified_; });
    else
      wake_.wait(lock, [this] { return stop_ || forced_ || notified_; });
    if (stop_) break;
    const bool force = forced_;
    forced_ = false;
    notified_ = false;
    lock.unlock();
    step(force);
    lock.lock();
  }
}

void GalleryWatcher::wait_unless_stopping(unsigned ms) {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stop_; });
}

// Waits on the listening connection's socket (a short timeout to notice the stop); a change wakes
// the watcher thread. Losing the connection (or not getting it at all) wakes it too: an outage is
// noticed without waiting for the poll. The connection is opened again after a backoff, which
// wakes it once more: changes made meanwhile were not notified.
void GalleryWatcher::listen() {
  constexpr unsigned kStopCheckMs = 200;
  std::optional<gallery::GalleryStore> listener;
  unsigned backoff_ms = kFirstBackoffMs;
  bool lost = false;
  const auto wake = [this] {
    {
      std::lock_guard lock(mutex_);
      notified_ = true;
    }
    wake_.notify_all();
  };
  const auto lose = [&] {
    listener.reset();
    if (!lost) wake();
    lost = true;
  };
  while (!stopping_) {
    try {
      if (!listener) {
        Result<gallery::GalleryStore> opened =
            gallery::GalleryStore::open(path_, gallery::GalleryStore::Access::ReadOnly);
        if (opened && opened.value().listen_for_changes()) {
          listener.emplace(std::move(opened.value()));
          backoff_ms = kFirstBackoffMs;
          if (lost) wake();
          lost = false;
          continue;
        }
        lose();
        wait_unless_stopping(backoff_ms);
        backoff_ms = next_backoff(backoff_ms);
        continue;
      }
      pollfd socket{listener->change_socket(), POLLIN, 0};
      const int ready = ::poll(&socket, 1, kStopCheckMs);
      if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
      Result<bool> notified = ready > 0 ? listener->changes_notified() : Result<bool>(Error{ErrorKind::Io, "poll"});
      if (!notified)
        lose();
      else if (notified.value())
        wake();
    } catch (...) {  // out of memory: try again later, the poll still serves
      lose();
      wait_unless_stopping(backoff_ms);
    }
  }
}

}  // namespace taconite::gst

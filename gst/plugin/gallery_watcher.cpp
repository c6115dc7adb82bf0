#include "gallery_watcher.hpp"

#include <chrono>

namespace taconite::gst {

GalleryWatcher::GalleryWatcher(std::filesystem::path path, gallery::IndexOptions options, unsigned poll_ms,
                               Report report)
    : path_(std::move(path)), options_(options), poll_ms_(poll_ms), report_(std::move(report)) {}

GalleryWatcher::~GalleryWatcher() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

gallery::Status GalleryWatcher::start(const std::optional<gallery::ModelFingerprint>& required, std::string* note) {
  Result<gallery::GalleryStore> store = gallery::GalleryStore::open(path_, gallery::GalleryStore::Access::ReadOnly);
  if (!store) return store.error();
  if (required)
    if (gallery::Status s = store.value().check_model(*required); !s) return s.error();
  Result<gallery::GalleryIndex> index = gallery::GalleryIndex::load(store.value(), options_, note);
  if (!index) return index.error();
  store_.emplace(std::move(store.value()));
  index_ = std::make_shared<const gallery::GalleryIndex>(std::move(index.value()));
  thread_ = std::thread([this] { run(); });
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

Result<bool> GalleryWatcher::refresh(bool force) {
  if (!store_) {  // the connection failed before: reopen (the file may have been replaced)
    Result<gallery::GalleryStore> store = gallery::GalleryStore::open(path_, gallery::GalleryStore::Access::ReadOnly);
    if (!store) return store.error();
    store_.emplace(std::move(store.value()));
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
    store_.reset();
    return index.error();
  }
  const std::shared_ptr<const gallery::GalleryIndex> old = current();
  if (index.value().model_fingerprint() != old->model_fingerprint())
    return Error{ErrorKind::Input, path_.string() + ": the gallery now belongs to another model (" +
                                       index.value().model() + "); keeping the previous one"};
  auto fresh = std::make_shared<const gallery::GalleryIndex>(std::move(index.value()));
  {
    std::lock_guard lock(mutex_);
    index_ = std::move(fresh);
  }
  report_(false, "gallery revision " + std::to_string(revision.value()) + ": " + note);
  return true;
}

void GalleryWatcher::run() {
  std::string last_problem;  // a lasting problem is reported once, not on every poll
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (poll_ms_ > 0)
      wake_.wait_for(lock, std::chrono::milliseconds(poll_ms_), [this] { return stop_ || forced_; });
    else
      wake_.wait(lock, [this] { return stop_ || forced_; });
    if (stop_) break;
    const bool force = forced_;
    forced_ = false;
    lock.unlock();
    Result<bool> refreshed = refresh(force);
    if (!refreshed && refreshed.error().message != last_problem) report_(true, refreshed.error().message);
    last_problem = refreshed ? std::string() : refreshed.error().message;
    lock.lock();
  }
}

}  // namespace taconite::gst

// Keeps taconiteidentify's gallery index current while the pipeline plays: a background thread
// polls the gallery's revision (one small SQLite read) every `poll_ms`, or wakes on reload(), and
// builds the new index off the streaming thread; the streaming thread only swaps a shared pointer,
// so a gallery change never stalls video. A reload that fails keeps the previous index and
// reports a warning.
#pragma once

#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "gallery_index.hpp"

namespace taconite::gst {

class GalleryWatcher {
 public:
  // Called from the watcher's thread: a reload failed (warning) or succeeded (note).
  using Report = std::function<void(bool warning, const std::string& message)>;

  GalleryWatcher(std::filesystem::path path, gallery::IndexOptions options, unsigned poll_ms, Report report);
  ~GalleryWatcher();
  GalleryWatcher(const GalleryWatcher&) = delete;
  GalleryWatcher& operator=(const GalleryWatcher&) = delete;

  // Loads the gallery now (on the caller's thread: a missing, corrupt or foreign gallery fails the
  // start) and, when it is `required` to be of a model, checks the fingerprint; then starts polling.
  gallery::Status start(const std::optional<gallery::ModelFingerprint>& required, std::string* note);
  // Asks the thread to re-read the gallery now (even when its revision did not change).
  void reload();
  // The current index; never null after a successful start().
  std::shared_ptr<const gallery::GalleryIndex> current() const;

 private:
  void run();
  Result<bool> refresh(bool force);  // true when a new index was installed

  const std::filesystem::path path_;
  const gallery::IndexOptions options_;
  const unsigned poll_ms_;
  const Report report_;
  std::optional<gallery::GalleryStore> store_;  // the watcher thread's connection

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false, forced_ = false;
  std::shared_ptr<const gallery::GalleryIndex> index_;
  std::thread thread_;
};

}  // namespace taconite::gst

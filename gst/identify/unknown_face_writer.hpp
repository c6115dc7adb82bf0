// taconiteidentify keep-unknowns: the unknown faces of ended tracks go into the gallery on a thread
// of their own, so the streaming thread never waits for the disk or the network: it only moves a
// face (embedding and 112x112 crop) into a bounded queue. The thread JPEG-encodes the crop and calls
// GalleryStore::add_unknown_face on its own read-write connection, opened on that thread when the
// first face arrives and opened again after a failure (an SQLite file or a PostgreSQL database).
//
// An SQLite gallery's path is looked at before each write (device and inode, as the gallery watcher
// does): SQLite would go on writing into a file deleted or replaced under its name, where nobody
// finds the faces. A file gone fails the write; a file replaced (`mv new.db people.db`) is opened
// again and written into when it is a gallery of the model the pipeline searches, else the write
// fails. Every gallery opened is checked for that model.
//
// A face arriving at a full queue is dropped, as is one whose write fails; both are counted. A
// failing gallery is reported once (a warning) until a write works again (an info then), never once
// per face.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <opencv2/core.hpp>
#include <optional>
#include <string>

#include "file_identity.hpp"
#include "gallery_store.hpp"
#include "job_thread.hpp"

namespace taconite::gst {

// What the element's read-only properties show; shared so they stay readable after stop.
struct UnknownCounters {
  std::atomic<std::uint64_t> kept{0};     // written into the gallery
  std::atomic<std::uint64_t> dropped{0};  // queue full, write failed, or still queued at stop
};

class UnknownFaceWriter {
 public:
  // Faces waiting for the thread at most (~40 KB each).
  static constexpr std::size_t kMaxQueued = 32;
  static constexpr int kJpegQuality = 90;

  // `report(warning, message)` is called on the writer's thread (it must not throw; it is caught).
  using Report = std::function<void(bool warning, const std::string& message)>;
  // `model`: the model of the gallery the pipeline searches; faces go only into a gallery of it.
  UnknownFaceWriter(std::string gallery, gallery::ModelFingerprint model, gallery::UnknownRetention keep,
                    std::shared_ptr<UnknownCounters> counters, Report report);
  ~UnknownFaceWriter();  // drops what is still queued (counted), waits for the face being written
  UnknownFaceWriter(const UnknownFaceWriter&) = delete;
  UnknownFaceWriter& operator=(const UnknownFaceWriter&) = delete;

  // Queues a face and its RGB crop (empty: no picture); false (counted dropped) when the queue is
  // full. Never waits for the thread's work.
  bool submit(gallery::NewUnknownFace face, cv::Mat rgb);
  // Waits up to `timeout_ms` until every queued face is written or dropped.
  void drain(unsigned timeout_ms);

 private:
  struct Job {
    gallery::NewUnknownFace face;
    cv::Mat rgb;
  };

  void run(Job& job) noexcept;
  // Writes one face; "" or why it could not (naming the gallery).
  std::string write(Job& job);
  // Makes store_ the gallery the path names now; "" or why it cannot be written (naming it).
  std::string open_current();
  void report(bool warning, const std::string& message) noexcept;

  const std::string gallery_;
  const std::string shown_;  // gallery_ for messages (displayed_location: no password)
  const gallery::ModelFingerprint model_;
  const gallery::UnknownRetention keep_;
  const std::shared_ptr<UnknownCounters> counters_;
  const Report report_;
  // The writer thread's own.
  std::optional<gallery::GalleryStore> store_;
  std::optional<gallery::FileIdentity> opened_;  // the SQLite file store_ has open
  bool failing_ = false;
  std::uint64_t dropped_at_failure_ = 0;
  JobThread<Job> jobs_;  // last: stopped first, before what its jobs use
};

}  // namespace taconite::gst

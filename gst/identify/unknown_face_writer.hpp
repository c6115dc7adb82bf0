// taconiteidentify keep-unknowns: the unknown faces of ended tracks go into the gallery. This is
// the gallery sink of the shared face writer (face_jpeg_writer.hpp), whose thread JPEG-encodes the
// crop so the streaming thread never waits for the disk or the network: it only moves a face
// (embedding and 112x112 crop) into a bounded queue. The sink calls GalleryStore::add_unknown_face
// on its own read-write connection, opened on that thread when the first face arrives and opened
// again after a failure (an SQLite file or a PostgreSQL database).
//
// An SQLite gallery's path is looked at before each write (device and inode, as the gallery watcher
// does): SQLite would go on writing into a file deleted or replaced under its name, where nobody
// finds the faces. A file gone fails the write; a file replaced (`mv new.db people.db`) is opened
// again and written into when it is a gallery of the model the pipeline searches, else the write
// fails. Every gallery opened is checked for that model.
//
// A face arriving at a full queue is dropped, as is one whose write fails; both are counted. A
// failing gallery is reported once (a warning) until a write works again (an info then), never once
// per face. A crop that does not encode (or is too big) is kept without its picture.
#pragma once

#include <cstdint>
#include <memory>
#include <opencv2/core.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "face_jpeg_writer.hpp"
#include "file_identity.hpp"
#include "gallery_store.hpp"

namespace taconite::gst {

// What the element's read-only properties show (stored: written into the gallery); shared so they
// stay readable after stop.
using UnknownCounters = FaceWriterCounters;

class UnknownFaceWriter : private FaceSink<gallery::NewUnknownFace> {
 public:
  // Faces waiting for the thread at most (~40 KB each).
  static constexpr std::size_t kMaxQueued = 32;
  static constexpr int kJpegQuality = 90;

  using Report = FaceJpegWriter<gallery::NewUnknownFace>::Report;
  // `model`: the model of the gallery the pipeline searches; faces go only into a gallery of it.
  UnknownFaceWriter(std::string gallery, gallery::ModelFingerprint model, gallery::UnknownRetention keep,
                    std::shared_ptr<UnknownCounters> counters, Report report);
  ~UnknownFaceWriter() override = default;  // drops what is still queued (counted), waits for the face being written
  UnknownFaceWriter(const UnknownFaceWriter&) = delete;
  UnknownFaceWriter& operator=(const UnknownFaceWriter&) = delete;

  // Queues a face and its RGB crop (empty: no picture); false (counted dropped) when the queue is
  // full. Never waits for the thread's work.
  bool submit(gallery::NewUnknownFace face, cv::Mat rgb) { return jobs_.submit(std::move(face), std::move(rgb)); }
  // Waits up to `timeout_ms` until every queued face is written or dropped.
  void drain(unsigned timeout_ms) { jobs_.drain(timeout_ms); }

 private:
  // FaceSink: writes one face; "" or why it could not (naming the gallery).
  std::string store(gallery::NewUnknownFace& face, std::vector<unsigned char> jpeg) override;
  std::string exception_problem(const std::string& what) const override;
  std::string failing_message(const std::string& problem) const override;
  std::string recovered_message(std::uint64_t dropped_meanwhile) const override;
  void failed() noexcept override { store_.reset(); }  // the next face opens the gallery again
  // Makes store_ the gallery the path names now; "" or why it cannot be written (naming it).
  std::string open_current();

  const std::string gallery_;
  const std::string shown_;  // gallery_ for messages (displayed_location: no password)
  const gallery::ModelFingerprint model_;
  const gallery::UnknownRetention keep_;
  // The writer thread's own.
  std::optional<gallery::GalleryStore> store_;
  std::optional<gallery::FileIdentity> opened_;  // the SQLite file store_ has open
  FaceJpegWriter<gallery::NewUnknownFace> jobs_;  // last: stopped first, before what its jobs use
};

}  // namespace taconite::gst

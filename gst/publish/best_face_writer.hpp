// The best faces of taconitepublish's tracks as JPEG files (or base64 text): the sink of the
// shared face writer (face_jpeg_writer.hpp), whose thread encodes and writes them so the streaming
// thread only copies a 112x112 crop into a bounded queue. What is publish's own: file naming and
// retention, and the finished faces the track events reference.
//
// Files are named <stream>-<track uid>.jpg in the directory (characters other than letters, digits,
// '.', '_' and '-' in the stream name become '_'; the uid is a random UUID, so no two tracks of any
// run share a file), written to a temporary name and renamed so a reader never sees half a file; a
// better face of the same track replaces the file. Retention: the files of this naming pattern for
// this stream (those found at start, oldest first by modification time, then those written since),
// at most `max_files` of them and `max_bytes` together; beyond, the oldest are deleted (the newest
// written is always kept). No other file of the directory is ever deleted. A job arriving at a full
// queue is dropped, as is one whose file cannot be written; both are counted. Failing writes are
// reported once (a warning) until one works again (an info then).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "face_jpeg_writer.hpp"
#include "taconite/error.hpp"

namespace taconite::gst {

enum class BestFaceOutput : int {
  None = 0,    // no best face
  Path = 1,    // a JPEG file in the directory, its path in the events
  Base64 = 2,  // the JPEG inline in the events, base64
};

struct BestFaceWriterSettings {
  BestFaceOutput output = BestFaceOutput::Path;
  std::string dir;                  // Path: where the files go
  std::string stream;               // the file names' prefix
  std::size_t max_files = 1000;
  std::uint64_t max_bytes = 64ull << 20;
  std::size_t max_queued = 16;      // crops waiting for the thread at most
  int jpeg_quality = 90;
};

// A best face ready to be referenced: the file written, or the JPEG's base64.
struct EncodedFace {
  std::int64_t track_id = 0;
  std::string uid;  // the track's
  double quality = 0.0;
  std::string path;    // Path
  std::string base64;  // Base64
};

// What a best face carries to the writer thread besides its picture.
struct BestFaceJob {
  std::int64_t track_id;
  std::string uid;
  double quality;
};

class BestFaceWriter : private FaceSink<BestFaceJob> {
 public:
  using Report = FaceJpegWriter<BestFaceJob>::Report;

  // Path: creates the directory when missing, checks it is one we can write and takes the files of
  // its pattern there into retention. An Input error when no directory is set, an Io error naming
  // the directory when it cannot be made or written to.
  static Result<std::unique_ptr<BestFaceWriter>> start(const BestFaceWriterSettings& settings,
                                                       Report report = nullptr);
  ~BestFaceWriter() override = default;  // waits for the face being written; drops the queued ones
  BestFaceWriter(const BestFaceWriter&) = delete;
  BestFaceWriter& operator=(const BestFaceWriter&) = delete;

  // Queues an RGB crop (the caller's copy) of track `track_id` (`uid`) with its quality; false
  // (counted dropped) when the queue is full. Never waits for the thread's work.
  bool submit(std::int64_t track_id, const std::string& uid, double quality, cv::Mat rgb);
  // Whether a submit() now would be refused: the caller skips preparing the crop and counts it
  // dropped (refused()). Only the thread that submits fills the queue, so the answer holds for it.
  bool full() const { return jobs_.full(); }
  void refused() { jobs_.refused(); }
  // The faces finished since the last call, in the order submitted.
  std::vector<EncodedFace> take_finished();
  // Waits up to `timeout_ms` until every queued face is finished (end of stream).
  void drain(unsigned timeout_ms);
  std::uint64_t dropped() const { return jobs_.counters().dropped; }
  // The file a track's best face goes to (Path).
  std::string path_of(const std::string& uid) const;

 private:
  struct Kept {
    std::string path;
    std::uint64_t bytes;
  };

  BestFaceWriter(const BestFaceWriterSettings& settings, Report report);
  void adopt_earlier_files();
  // FaceSink: the file or base64 of one face, on the writer thread.
  std::string store(BestFaceJob& job, std::vector<unsigned char> jpeg) override;
  std::string exception_problem(const std::string& what) const override;
  std::string failing_message(const std::string& problem) const override;
  std::string recovered_message(std::uint64_t dropped_meanwhile) const override;
  std::string write_file(const std::string& path, const std::vector<unsigned char>& jpeg);
  void keep_within_limits(const std::string& path, std::uint64_t bytes);
  void trim();

  BestFaceWriterSettings settings_;
  std::string name_prefix_;  // the sanitised stream name and '-'
  std::string prefix_;       // directory and name_prefix_
  std::deque<Kept> kept_;  // files of our pattern, oldest first (writer thread only, once started)
  std::uint64_t kept_bytes_ = 0;

  std::mutex finished_lock_;
  std::vector<EncodedFace> finished_;
  FaceJpegWriter<BestFaceJob> jobs_;  // last: stopped first, before what its jobs use
};

}  // namespace taconite::gst

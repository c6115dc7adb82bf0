// The best faces of taconitepublish's tracks as JPEG files (or base64 text), encoded and written on
// a thread of their own so the streaming thread only copies a 112x112 crop into a bounded queue.
//
// Files are named <stream>-<track id>.jpg in the directory (characters other than letters, digits,
// '.', '_' and '-' in the stream name become '_'), written to a temporary name and renamed so a
// reader never sees half a file; a better face of the same track replaces the file. Retention: the
// files this writer wrote since it started, at most `max_files` of them and `max_bytes` together;
// beyond, the oldest written are deleted (the newest is always kept). A job arriving at a full queue
// is dropped, as is one whose file cannot be written; both are counted.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "job_thread.hpp"

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
  double quality = 0.0;
  std::string path;    // Path
  std::string base64;  // Base64
};

class BestFaceWriter {
 public:
  // Path: creates the directory when missing and checks it is one we can write; null with `error`
  // naming it otherwise.
  static std::unique_ptr<BestFaceWriter> start(const BestFaceWriterSettings& settings, std::string* error);
  ~BestFaceWriter();  // waits for the face being written; drops the queued ones
  BestFaceWriter(const BestFaceWriter&) = delete;
  BestFaceWriter& operator=(const BestFaceWriter&) = delete;

  // Queues an RGB crop (the caller's copy) of track `track_id` with its quality; false (counted
  // dropped) when the queue is full. Never waits for the thread's work.
  bool submit(std::int64_t track_id, double quality, cv::Mat rgb);
  // The faces finished since the last call, in the order submitted.
  std::vector<EncodedFace> take_finished();
  // Waits up to `timeout_ms` until every queued face is finished (end of stream).
  void drain(unsigned timeout_ms);
  std::uint64_t dropped() const { return dropped_; }
  // The file a track's best face goes to (Path).
  std::string path_of(std::int64_t track_id) const;

 private:
  struct Job {
    std::int64_t track_id;
    double quality;
    cv::Mat rgb;
  };
  struct Kept {
    std::string path;
    std::uint64_t bytes;
  };

  explicit BestFaceWriter(const BestFaceWriterSettings& settings);
  void run(const Job& job) noexcept;
  bool finish(const Job& job, EncodedFace* face);
  bool write_file(const std::string& path, const std::vector<unsigned char>& jpeg);
  void keep_within_limits(const std::string& path, std::uint64_t bytes);

  BestFaceWriterSettings settings_;
  std::string prefix_;  // directory and sanitised stream name
  std::atomic<std::uint64_t> dropped_{0};
  std::deque<Kept> kept_;  // written files, oldest first (writer thread only)
  std::uint64_t kept_bytes_ = 0;

  std::mutex finished_lock_;
  std::vector<EncodedFace> finished_;
  JobThread<Job> jobs_;  // last: stopped first, before what its jobs use
};

}  // namespace taconite::gst

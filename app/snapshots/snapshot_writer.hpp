// Full-frame snapshots of taconite-run: when a track's identity is decided (label_state turns
// known or unknown) and when it ends, a JPEG of the newest frame that showed it, the face boxed and
// labelled, written as DIR/<camera>/<YYYY-MM-DD>/<uid>-<kind>.jpg (kind: "decided" or "end"; the
// date of the event, UTC; camera and uid with characters other than letters, digits, '.', '_', '-'
// as '_').
//
// The streaming thread (on_frame) only copies: for frames whose ROIs carry track ids, a copy
// downscaled to max_width (at most keep_per_second a camera, and any frame showing a track not kept
// yet), with the ROI boxes, ids and uids read from the metadata. At most max_kept_frames copies a
// camera stay alive (a track whose last kept frame was dropped gets no snapshot: counted). The
// event (main loop thread) picks the newest kept frame of the track and hands it to a writer thread
// (a queue of 8; beyond: dropped, counted) that draws, encodes (quality 1..100) and writes atomically
// (a temporary file renamed into place), then calls on_snapshot. A write that fails (a full disk, an
// unwritable directory) is a counted drop, logged once until a write works again.
//
// Retention: of the snapshots under DIR (those of earlier runs are found at start: at most
// kMaxScannedSnapshots), the oldest are deleted beyond max_files, max_bytes or max_age_s after each
// write, at most kMaxDeletesPerWrite a write (the rest at the next). No other file is deleted.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pipeline_observer.hpp"
#include "taconite/error.hpp"

namespace taconite::app {

inline constexpr std::size_t kMaxScannedSnapshots = 200000;
inline constexpr std::size_t kMaxDeletesPerWrite = 64;

struct SnapshotOptions {
  std::filesystem::path dir;             // where the snapshots go (created when missing)
  int max_width = 1280;                  // a snapshot's width and height at most this (64..8192)
  int quality = 85;                      // JPEG quality, 1..100
  std::size_t max_files = 10000;         // retention by count (0: none)
  std::uint64_t max_bytes = 1ULL << 30;  // retention by bytes (0: none)
  double max_age_s = 0;                  // retention by age, seconds (0: none)
  double keep_per_second = 4;            // frame copies a camera kept per second, (0, 100]
  std::size_t max_kept_frames = 8;       // frame copies alive a camera, 1..256
  std::size_t max_tracks = 256;          // tracks remembered a camera, 1..100000
  // Called on the writer thread after a snapshot is written (MQTT publishes it, EventHistory
  // records its path): the camera, the track's uid, the kind ("decided" or "end"), the file, its
  // JPEG bytes. It must not block for long: the next snapshot waits.
  std::function<void(const std::string& camera, const std::string& uid, const std::string& kind,
                     const std::filesystem::path& path, const std::vector<unsigned char>& jpeg)>
      on_snapshot;
  std::function<void(const std::string&)> log;  // the runner's logger; none: not logged
};

struct SnapshotStats {
  std::uint64_t frames_kept = 0;   // frame copies made on the streaming thread
  std::uint64_t written = 0;       // snapshots written
  std::uint64_t no_frame = 0;      // events whose track had no kept frame
  std::uint64_t dropped = 0;       // writer queue full, or the write failed
  std::uint64_t write_errors = 0;  // of those, the writes that failed
  std::uint64_t deleted = 0;       // removed by retention
  std::size_t files = 0;           // snapshots under DIR now
  std::uint64_t bytes = 0;         // their bytes
};

// `text` with characters other than letters, digits, '.', '_', '-' as '_', at most 128 bytes, never
// "", "." or "..": a safe single path component.
std::string safe_component(const std::string& text);

class SnapshotWriter final : public PipelineObserver {
 public:
  // Creates DIR and finds the snapshots already there. Input error for options outside their
  // bounds; Io error naming DIR when it cannot be made.
  static Result<std::unique_ptr<SnapshotWriter>> start(SnapshotOptions options);
  ~SnapshotWriter() override;  // writes what is queued (at most ~2 s), then stops
  SnapshotWriter(const SnapshotWriter&) = delete;
  SnapshotWriter& operator=(const SnapshotWriter&) = delete;

  void on_frame(const std::string& camera, GstBuffer* frame, const GstVideoInfo& info) override;
  void on_track_event(const TrackEvent& event) override;

  SnapshotStats stats() const;
  // Waits until the writer has nothing queued (for tests and shutdown).
  void drain(std::chrono::milliseconds timeout);

 private:
  struct Impl;
  explicit SnapshotWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace taconite::app

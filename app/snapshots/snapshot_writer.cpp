#include "snapshot_writer.hpp"

#include <cmath>
#include <ctime>
#include <exception>
#include <opencv2/imgcodecs.hpp>
#include <optional>
#include <set>
#include <utility>

#include "job_thread.hpp"
#include "kept_frames.hpp"
#include "snapshot_drawing.hpp"
#include "snapshot_files.hpp"

namespace taconite::app {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kWriterQueue = 8;
constexpr std::size_t kMaxCameras = 1024;
constexpr std::size_t kMaxDecidedTracks = 100000;

struct Job {
  std::shared_ptr<const KeptFrame> frame;
  KeptFace face;
  std::string camera, uid, kind, label_state, label;
  double epoch_s = 0;
};

double wall_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// "2026-12-06" (UTC) of the event; the writer's clock for a time that has none.
std::string utc_date(double epoch_s) {
  if (!std::isfinite(epoch_s) || epoch_s <= 0 || epoch_s > 253402300799.0) epoch_s = wall_now();
  const auto seconds = static_cast<std::time_t>(epoch_s);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d", &tm);
  return text;
}

Status check(const SnapshotOptions& o) {
  auto bad = [](const std::string& what) { return Error{ErrorKind::Input, "snapshots: " + what}; };
  if (o.dir.empty()) return bad("no directory given");
  if (o.max_width < 64 || o.max_width > 8192)
    return bad("max_width " + std::to_string(o.max_width) + " is outside 64..8192");
  if (o.quality < 1 || o.quality > 100) return bad("quality " + std::to_string(o.quality) + " is outside 1..100");
  if (!std::isfinite(o.max_age_s) || o.max_age_s < 0) return bad("max_age_s must be finite and >= 0");
  if (!(o.keep_per_second > 0 && o.keep_per_second <= 100)) return bad("keep_per_second must be in (0, 100]");
  if (o.max_kept_frames < 1 || o.max_kept_frames > 256) return bad("max_kept_frames must be in 1..256");
  if (o.max_tracks < 1 || o.max_tracks > 100000) return bad("max_tracks must be in 1..100000");
  return Ok{};
}

}  // namespace

std::string safe_component(const std::string& text) {
  std::string out;
  for (const char c : text.substr(0, 128)) {
    const bool plain =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    out += plain ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

struct SnapshotWriter::Impl {
  explicit Impl(SnapshotOptions o)
      : options(std::move(o)),
        files(options.dir, SnapshotRetention{options.max_files, options.max_bytes, options.max_age_s}) {}

  KeptFrames* frames_of(const std::string& camera) {
    std::lock_guard lock(cameras_mutex);
    auto it = cameras.find(camera);
    if (it != cameras.end()) return it->second.get();
    if (cameras.size() >= kMaxCameras) return nullptr;
    auto made = std::make_unique<KeptFrames>(options.max_width, options.keep_per_second, options.max_kept_frames,
                                             options.max_tracks);
    return cameras.emplace(camera, std::move(made)).first->second.get();
  }

  void say(const std::string& line) const {
    if (options.log) options.log(line);
  }

  // On the writer thread; never throws.
  void write(Job& job) noexcept {
    try {
      const cv::Mat bgr = draw_snapshot(*job.frame, job.face, job.label_state, job.label);
      job.frame.reset();  // the copy may go now
      std::vector<unsigned char> jpeg;
      if (!cv::imencode(".jpg", bgr, jpeg, {cv::IMWRITE_JPEG_QUALITY, options.quality}) || jpeg.empty()) {
        ++dropped;
        return;
      }
      const fs::path relative = fs::path(safe_component(job.camera)) / utc_date(job.epoch_s) /
                                (safe_component(job.uid) + "-" + job.kind + ".jpg");
      if (Status s = files.write(relative, jpeg); !s) {
        ++dropped;
        ++write_errors;
        if (!failing) {
          failing = true;
          dropped_at_failure = dropped.load();
          say("snapshots: " + s.error().message + "; snapshots are dropped until a write works again");
        }
        return;
      }
      if (failing) {
        failing = false;
        say("snapshots: writing again (" + std::to_string(dropped.load() - dropped_at_failure + 1) +
            " dropped meanwhile)");
      }
      ++written;
      deleted += files.enforce(wall_now(), kMaxDeletesPerWrite);
      file_count = files.files();
      byte_count = files.bytes();
      if (options.on_snapshot) options.on_snapshot(job.camera, job.uid, job.kind, options.dir / relative, jpeg);
    } catch (const std::exception& e) {  // cv::Exception, std::bad_alloc, or one from on_snapshot
      ++dropped;
      say(std::string("snapshots: a snapshot failed: ") + e.what());
    }
  }

  const SnapshotOptions options;
  SnapshotFiles files;  // the writer thread's (scanned before it starts)
  bool failing = false;
  std::uint64_t dropped_at_failure = 0;
  std::mutex cameras_mutex;
  std::map<std::string, std::unique_ptr<KeptFrames>> cameras;
  std::set<std::string> decided;  // main loop thread only: tracks whose decided snapshot was made
  std::atomic<std::uint64_t> frames_kept{0}, written{0}, no_frame{0}, dropped{0}, write_errors{0}, deleted{0};
  std::atomic<std::size_t> file_count{0};
  std::atomic<std::uint64_t> byte_count{0};
  std::optional<gst::JobThread<Job>> writer;  // last: stopped before the rest goes
};

Result<std::unique_ptr<SnapshotWriter>> SnapshotWriter::start(SnapshotOptions options) {
  if (Status s = check(options); !s) return s.error();
  try {
    std::error_code ec;
    fs::create_directories(options.dir, ec);
    if (ec || !fs::is_directory(options.dir, ec))
      return Error{ErrorKind::Io,
                   options.dir.string() + ": cannot create the snapshot directory" + (ec ? ": " + ec.message() : "")};
    auto impl = std::make_unique<Impl>(std::move(options));
    bool truncated = false;
    impl->files.scan(kMaxScannedSnapshots, truncated);
    if (truncated)
      impl->say("snapshots: more than " + std::to_string(kMaxScannedSnapshots) + " snapshots under " +
                impl->options.dir.string() + "; retention knows the first found and those written from now on");
    impl->deleted += impl->files.enforce(wall_now(), kMaxScannedSnapshots);
    impl->file_count = impl->files.files();
    impl->byte_count = impl->files.bytes();
    Impl* raw = impl.get();
    impl->writer.emplace(kWriterQueue, [raw](Job& job) { raw->write(job); });
    return std::unique_ptr<SnapshotWriter>(new SnapshotWriter(std::move(impl)));
  } catch (const std::exception& e) {
    return Error{ErrorKind::Io, "snapshots: cannot start: " + std::string(e.what())};
  }
}

SnapshotWriter::SnapshotWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SnapshotWriter::~SnapshotWriter() {
  impl_->writer->drain(2000);
  impl_->dropped += impl_->writer->stop();
}

void SnapshotWriter::on_frame(const std::string& camera, GstBuffer* frame, const GstVideoInfo& info) {
  if (!frame) return;
  try {
    KeptFrames* frames = impl_->frames_of(camera);
    if (frames && frames->offer(frame, info)) ++impl_->frames_kept;
  } catch (const std::exception&) {  // std::bad_alloc: this frame is not kept
  }
}

void SnapshotWriter::on_track_event(const TrackEvent& e) {
  try {
    const bool end = e.kind == "end";
    const bool decided = (e.kind == "new" || e.kind == "update") &&
                         (e.label_state == "known" || e.label_state == "unknown") && !impl_->decided.contains(e.uid);
    if (!end && !decided) return;
    if (decided) {
      if (impl_->decided.size() >= kMaxDecidedTracks) impl_->decided.clear();  // (tracks that never ended)
      impl_->decided.insert(e.uid);
    } else {
      impl_->decided.erase(e.uid);
    }
    KeptFrames* frames = impl_->frames_of(e.camera);
    std::optional<KeptFrames::Found> found = frames ? frames->find(e.uid, e.track_id) : std::nullopt;
    if (end && frames) frames->forget(e.uid, e.track_id);
    if (!found) {
      ++impl_->no_frame;
      return;
    }
    Job job{std::move(found->frame),
            found->face,
            e.camera,
            e.uid,
            end ? "end" : "decided",
            e.label_state,
            snapshot_label(e.label_state, e.label, e.confidence, e.track_id),
            e.epoch_s};
    if (!impl_->writer->submit(std::move(job))) ++impl_->dropped;
  } catch (const std::exception&) {
    ++impl_->dropped;
  }
}

SnapshotStats SnapshotWriter::stats() const {
  SnapshotStats s;
  s.frames_kept = impl_->frames_kept;
  s.written = impl_->written;
  s.no_frame = impl_->no_frame;
  s.dropped = impl_->dropped;
  s.write_errors = impl_->write_errors;
  s.deleted = impl_->deleted;
  s.files = impl_->file_count;
  s.bytes = impl_->byte_count;
  return s;
}

void SnapshotWriter::drain(std::chrono::milliseconds timeout) {
  impl_->writer->drain(static_cast<unsigned>(timeout.count()));
}

}  // namespace taconite::app

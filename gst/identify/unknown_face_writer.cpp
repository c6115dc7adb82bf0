#include "unknown_face_writer.hpp"

#include <cerrno>
#include <cstring>
#include <exception>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <utility>
#include <vector>

#include "displayed_location.hpp"

namespace taconite::gst {

UnknownFaceWriter::UnknownFaceWriter(std::string gallery, gallery::ModelFingerprint model,
                                     gallery::UnknownRetention keep, std::shared_ptr<UnknownCounters> counters,
                                     Report report)
    : gallery_(std::move(gallery)),
      shown_(gallery::displayed_location(gallery_)),
      model_(std::move(model)),
      keep_(keep),
      counters_(std::move(counters)),
      report_(std::move(report)),
      jobs_(kMaxQueued, [this](Job& job) { run(job); }) {}

UnknownFaceWriter::~UnknownFaceWriter() { counters_->dropped += jobs_.stop(); }

bool UnknownFaceWriter::submit(gallery::NewUnknownFace face, cv::Mat rgb) {
  if (jobs_.submit(Job{std::move(face), std::move(rgb)})) return true;
  ++counters_->dropped;
  return false;
}

void UnknownFaceWriter::drain(unsigned timeout_ms) { jobs_.drain(timeout_ms); }

void UnknownFaceWriter::run(Job& job) noexcept {
  std::string problem;
  try {
    problem = write(job);
  } catch (const std::exception& e) {  // nothing may leave the thread
    problem = "Could not keep an unknown face in the gallery " + shown_ + ": " + e.what();
  } catch (...) {
    problem = "Could not keep an unknown face in the gallery " + shown_;
  }
  if (problem.empty()) {
    ++counters_->kept;
    if (failing_)
      report(false, "Unknown faces are kept in the gallery " + shown_ + " again (" +
                        std::to_string(counters_->dropped - dropped_at_failure_) + " dropped meanwhile).");
    failing_ = false;
  } else {
    store_.reset();  // the next face opens the gallery again (a PostgreSQL server may be back)
    if (!failing_) {
      dropped_at_failure_ = counters_->dropped;
      report(true, problem + ". Unknown faces are dropped (counted in unknowns-dropped) until a write works again.");
    }
    failing_ = true;
    ++counters_->dropped;
  }
}

std::string UnknownFaceWriter::write(Job& job) {
  if (!job.rgb.empty()) {
    cv::Mat bgr;
    cv::cvtColor(job.rgb, bgr, cv::COLOR_RGB2BGR);
    std::vector<unsigned char> jpeg;
    // A crop that does not encode (or is too big) is kept without its picture, not lost.
    if (cv::imencode(".jpg", bgr, jpeg, {cv::IMWRITE_JPEG_QUALITY, kJpegQuality}) &&
        jpeg.size() <= gallery::kMaxUnknownJpegBytes)
      job.face.jpeg = std::move(jpeg);
  }
  if (std::string problem = open_current(); !problem.empty()) return problem;
  Result<std::int64_t> added = store_->add_unknown_face(job.face, keep_);
  if (!added) return "Could not keep an unknown face in the gallery " + shown_ + ": " + added.error().message;
  return {};
}

std::string UnknownFaceWriter::open_current() {
  std::optional<gallery::FileIdentity> named;
  if (!gallery::is_postgres_location(gallery_)) {
    int error = 0;
    named = gallery::file_identity(gallery_, error);
    if (!named) {
      store_.reset();
      return "Could not keep an unknown face in the gallery " + shown_ + ": " +
             (error == ENOENT ? std::string("the file is gone (deleted or moved away)") : std::strerror(error));
    }
    if (store_ && opened_ != named) store_.reset();  // replaced: write into the file the path names now
  }
  if (store_) return {};
  // (Stat'ed before the open: a replacement in between is noticed at the next face.)
  Result<gallery::GalleryStore> opened = gallery::GalleryStore::open(gallery_, gallery::GalleryStore::Access::ReadWrite);
  if (!opened) return "Could not open the gallery " + shown_ + " to keep unknown faces: " + opened.error().message;
  if (gallery::Status same = opened.value().check_model(model_); !same)
    return "Could not keep an unknown face in the gallery " + shown_ + ": " + same.error().message;
  store_.emplace(std::move(opened).value());
  opened_ = named;
  return {};
}

void UnknownFaceWriter::report(bool warning, const std::string& message) noexcept {
  try {
    if (report_) report_(warning, message);
  } catch (...) {  // a report that throws loses its message, never the thread
  }
}

}  // namespace taconite::gst

#include "unknown_face_writer.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include "displayed_location.hpp"

namespace taconite::gst {

UnknownFaceWriter::UnknownFaceWriter(std::string gallery, gallery::ModelFingerprint model,
                                     gallery::UnknownRetention keep, std::shared_ptr<UnknownCounters> counters,
                                     Report report)
    : gallery_(std::move(gallery)),
      shown_(gallery::displayed_location(gallery_)),
      model_(std::move(model)),
      keep_(keep),
      jobs_(*this, kMaxQueued, kJpegQuality, std::move(counters), std::move(report)) {}

std::string UnknownFaceWriter::exception_problem(const std::string& what) const {
  return "Could not keep an unknown face in the gallery " + shown_ + ": " + what;
}

std::string UnknownFaceWriter::failing_message(const std::string& problem) const {
  return problem + ". Unknown faces are dropped (counted in unknowns-dropped) until a write works again.";
}

std::string UnknownFaceWriter::recovered_message(std::uint64_t dropped_meanwhile) const {
  return "Unknown faces are kept in the gallery " + shown_ + " again (" + std::to_string(dropped_meanwhile) +
         " dropped meanwhile).";
}

std::string UnknownFaceWriter::store(gallery::NewUnknownFace& face, std::vector<unsigned char> jpeg) {
  // A crop that does not encode (or is too big) is kept without its picture, not lost.
  if (jpeg.size() <= gallery::kMaxUnknownJpegBytes) face.jpeg = std::move(jpeg);
  if (std::string problem = open_current(); !problem.empty()) return problem;
  Result<std::int64_t> added = store_->add_unknown_face(face, keep_);
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

}  // namespace taconite::gst

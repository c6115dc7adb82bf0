#include "best_face_writer.hpp"

#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <utility>

namespace taconite::gst {

namespace {

// A stream name as one safe file-name part: no '/', no '..' tricks, nothing a shell trips on.
std::string file_name_part(const std::string& stream) {
  std::string part = stream;
  for (char& c : part)
    if (!g_ascii_isalnum(c) && c != '.' && c != '_' && c != '-') c = '_';
  if (part.empty() || part[0] == '.') part.insert(part.begin(), '_');
  return part;
}

}  // namespace

std::unique_ptr<BestFaceWriter> BestFaceWriter::start(const BestFaceWriterSettings& settings, std::string* error) {
  if (settings.output == BestFaceOutput::Path) {
    if (settings.dir.empty()) {
      *error = "best-face=path needs a directory: set best-face-dir";
      return nullptr;
    }
    if (g_mkdir_with_parents(settings.dir.c_str(), 0755) != 0 ||
        !g_file_test(settings.dir.c_str(), G_FILE_TEST_IS_DIR) || g_access(settings.dir.c_str(), W_OK | X_OK) != 0) {
      const int err = errno;
      *error = "best-face-dir '" + settings.dir + "' is not a directory this process can write to: " +
               g_strerror(err);
      return nullptr;
    }
  }
  return std::unique_ptr<BestFaceWriter>(new BestFaceWriter(settings));
}

BestFaceWriter::BestFaceWriter(const BestFaceWriterSettings& settings)
    : settings_(settings),
      prefix_(settings.dir + "/" + file_name_part(settings.stream) + "-"),
      jobs_(settings.max_queued, [this](Job& job) { run(job); }) {}

BestFaceWriter::~BestFaceWriter() { dropped_ += jobs_.stop(); }

std::string BestFaceWriter::path_of(std::int64_t track_id) const { return prefix_ + std::to_string(track_id) + ".jpg"; }

bool BestFaceWriter::submit(std::int64_t track_id, double quality, cv::Mat rgb) {
  if (jobs_.submit(Job{track_id, quality, std::move(rgb)})) return true;
  ++dropped_;
  return false;
}

std::vector<EncodedFace> BestFaceWriter::take_finished() {
  std::lock_guard<std::mutex> guard(finished_lock_);
  return std::exchange(finished_, {});
}

void BestFaceWriter::drain(unsigned timeout_ms) { jobs_.drain(timeout_ms); }

void BestFaceWriter::run(const Job& job) noexcept {
  EncodedFace face;
  if (!finish(job, &face)) {
    ++dropped_;
    return;
  }
  std::lock_guard<std::mutex> guard(finished_lock_);
  finished_.push_back(std::move(face));
}

bool BestFaceWriter::finish(const Job& job, EncodedFace* face) {
  cv::Mat bgr;
  cv::cvtColor(job.rgb, bgr, cv::COLOR_RGB2BGR);
  std::vector<unsigned char> jpeg;
  if (!cv::imencode(".jpg", bgr, jpeg, {cv::IMWRITE_JPEG_QUALITY, settings_.jpeg_quality})) return false;
  face->track_id = job.track_id;
  face->quality = job.quality;
  if (settings_.output == BestFaceOutput::Base64) {
    gchar* text = g_base64_encode(jpeg.data(), jpeg.size());
    face->base64 = text;
    g_free(text);
    return true;
  }
  face->path = path_of(job.track_id);
  if (!write_file(face->path, jpeg)) return false;
  keep_within_limits(face->path, jpeg.size());
  return true;
}

bool BestFaceWriter::write_file(const std::string& path, const std::vector<unsigned char>& jpeg) {
  const std::string temporary = path + ".part";
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (!file) return false;
  const bool written = std::fwrite(jpeg.data(), 1, jpeg.size(), file) == jpeg.size();
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

// `path` was just written with `bytes`: it becomes the newest kept file, and the oldest go while
// the count or the bytes are over the limits.
void BestFaceWriter::keep_within_limits(const std::string& path, std::uint64_t bytes) {
  for (auto it = kept_.begin(); it != kept_.end(); ++it)
    if (it->path == path) {  // a better face of the same track replaced the file
      kept_bytes_ -= it->bytes;
      kept_.erase(it);
      break;
    }
  kept_.push_back(Kept{path, bytes});
  kept_bytes_ += bytes;
  while (kept_.size() > 1 && (kept_.size() > settings_.max_files || kept_bytes_ > settings_.max_bytes)) {
    std::remove(kept_.front().path.c_str());
    kept_bytes_ -= kept_.front().bytes;
    kept_.pop_front();
  }
}

}  // namespace taconite::gst

#include "best_face_writer.hpp"

#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
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
  std::unique_ptr<BestFaceWriter> writer(new BestFaceWriter(settings));
  writer->thread_ = std::thread([w = writer.get()] { w->run(); });
  return writer;
}

BestFaceWriter::BestFaceWriter(const BestFaceWriterSettings& settings)
    : settings_(settings), prefix_(settings.dir + "/" + file_name_part(settings.stream) + "-") {}

BestFaceWriter::~BestFaceWriter() {
  {
    std::lock_guard<std::mutex> guard(lock_);
    stopping_ = true;
    dropped_ += queue_.size();
    queue_.clear();
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string BestFaceWriter::path_of(std::int64_t track_id) const { return prefix_ + std::to_string(track_id) + ".jpg"; }

bool BestFaceWriter::submit(std::int64_t track_id, double quality, cv::Mat rgb) {
  {
    std::lock_guard<std::mutex> guard(lock_);
    if (queue_.size() >= settings_.max_queued) {
      ++dropped_;
      return false;
    }
    queue_.push_back(Job{track_id, quality, std::move(rgb)});
  }
  changed_.notify_all();
  return true;
}

std::vector<EncodedFace> BestFaceWriter::take_finished() {
  std::lock_guard<std::mutex> guard(lock_);
  return std::exchange(finished_, {});
}

void BestFaceWriter::drain(unsigned timeout_ms) {
  std::unique_lock<std::mutex> guard(lock_);
  changed_.wait_for(guard, std::chrono::milliseconds(timeout_ms), [&] { return queue_.empty() && !busy_; });
}

void BestFaceWriter::run() {
  std::unique_lock<std::mutex> guard(lock_);
  for (;;) {
    changed_.wait(guard, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    guard.unlock();
    EncodedFace face;
    const bool ok = finish(job, &face);
    guard.lock();
    busy_ = false;
    if (ok)
      finished_.push_back(std::move(face));
    else
      ++dropped_;
    changed_.notify_all();
  }
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

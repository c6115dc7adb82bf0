#include "best_face_writer.hpp"

#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <queue>
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

Result<std::unique_ptr<BestFaceWriter>> BestFaceWriter::start(const BestFaceWriterSettings& settings,
                                                             Report report) {
  if (settings.output == BestFaceOutput::Path) {
    if (settings.dir.empty())
      return Error{ErrorKind::Input, "best-face=path needs a directory: set best-face-dir"};
    if (g_mkdir_with_parents(settings.dir.c_str(), 0755) != 0 ||
        !g_file_test(settings.dir.c_str(), G_FILE_TEST_IS_DIR) || g_access(settings.dir.c_str(), W_OK | X_OK) != 0) {
      const int err = errno;
      return Error{ErrorKind::Io, "best-face-dir '" + settings.dir + "' is not a directory this process can write to: " +
                                      g_strerror(err)};
    }
  }
  return std::unique_ptr<BestFaceWriter>(new BestFaceWriter(settings, std::move(report)));
}

BestFaceWriter::BestFaceWriter(const BestFaceWriterSettings& settings, Report report)
    : settings_(settings),
      name_prefix_(file_name_part(settings.stream) + "-"),
      prefix_(settings.dir + "/" + name_prefix_),
      jobs_(*this, settings.max_queued, settings.jpeg_quality, std::make_shared<FaceWriterCounters>(),
            std::move(report)) {
  // The thread touches kept_ only for a job, and none was submitted yet.
  if (settings_.output == BestFaceOutput::Path) adopt_earlier_files();
}

std::string BestFaceWriter::path_of(const std::string& uid) const { return prefix_ + uid + ".jpg"; }

// Earlier runs' files of this stream (<stream>-<uuid>.jpg, nothing else) count against the limits,
// so the directory stays bounded across restarts. At most max_files are held while scanning: past
// that, the oldest seen goes at once.
void BestFaceWriter::adopt_earlier_files() {
  GDir* dir = g_dir_open(settings_.dir.c_str(), 0, nullptr);
  if (!dir) return;
  struct Found {
    std::int64_t mtime_ns;
    std::string path;
    std::uint64_t bytes;
  };
  const auto newer = [](const Found& a, const Found& b) { return a.mtime_ns > b.mtime_ns; };
  std::priority_queue<Found, std::vector<Found>, decltype(newer)> found(newer);  // top: the oldest
  constexpr std::size_t kUuidLength = 36;
  while (const gchar* name = g_dir_read_name(dir)) {
    const std::string file = name;
    if (file.size() != name_prefix_.size() + kUuidLength + 4 || file.compare(0, name_prefix_.size(), name_prefix_) != 0 ||
        file.compare(file.size() - 4, 4, ".jpg") != 0 ||
        !g_uuid_string_is_valid(file.substr(name_prefix_.size(), kUuidLength).c_str()))
      continue;
    const std::string path = settings_.dir + "/" + file;
    GStatBuf st;
    if (g_lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    found.push(Found{static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, path,
                     static_cast<std::uint64_t>(st.st_size)});
    if (found.size() > settings_.max_files) {
      std::remove(found.top().path.c_str());
      found.pop();
    }
  }
  g_dir_close(dir);
  for (; !found.empty(); found.pop()) {
    kept_.push_back(Kept{found.top().path, found.top().bytes});
    kept_bytes_ += found.top().bytes;
  }
  trim();
}

bool BestFaceWriter::submit(std::int64_t track_id, const std::string& uid, double quality, cv::Mat rgb) {
  return jobs_.submit(BestFaceJob{track_id, uid, quality}, std::move(rgb));
}

std::vector<EncodedFace> BestFaceWriter::take_finished() {
  std::lock_guard<std::mutex> guard(finished_lock_);
  return std::exchange(finished_, {});
}

void BestFaceWriter::drain(unsigned timeout_ms) { jobs_.drain(timeout_ms); }

std::string BestFaceWriter::exception_problem(const std::string& what) const {
  return "could not encode a best face: " + what;
}

std::string BestFaceWriter::failing_message(const std::string& problem) const {
  return "Best faces are dropped (counted in best-faces-dropped) until a write works again: " + problem;
}

std::string BestFaceWriter::recovered_message(std::uint64_t dropped_meanwhile) const {
  return "Best faces are written to " + settings_.dir + " again (" + std::to_string(dropped_meanwhile) +
         " dropped meanwhile).";
}

// Empty when the face is ready (and listed for take_finished), else what went wrong.
std::string BestFaceWriter::store(BestFaceJob& job, std::vector<unsigned char> jpeg) {
  if (jpeg.empty()) return "could not encode a best face as JPEG";
  EncodedFace face;
  face.track_id = job.track_id;
  face.uid = job.uid;
  face.quality = job.quality;
  if (settings_.output == BestFaceOutput::Base64) {
    gchar* text = g_base64_encode(jpeg.data(), jpeg.size());
    face.base64 = text;
    g_free(text);
  } else {
    face.path = path_of(job.uid);
    if (std::string problem = write_file(face.path, jpeg); !problem.empty()) return problem;
    keep_within_limits(face.path, jpeg.size());
  }
  std::lock_guard<std::mutex> guard(finished_lock_);
  finished_.push_back(std::move(face));
  return {};
}

std::string BestFaceWriter::write_file(const std::string& path, const std::vector<unsigned char>& jpeg) {
  const std::string temporary = path + ".part";
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (!file) return "cannot create '" + temporary + "': " + g_strerror(errno);
  const bool written = std::fwrite(jpeg.data(), 1, jpeg.size(), file) == jpeg.size();
  int err = errno;
  const bool closed = std::fclose(file) == 0;
  if (written && !closed) err = errno;
  if (!written || !closed) {
    std::remove(temporary.c_str());
    return "cannot write '" + temporary + "': " + g_strerror(err);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    err = errno;
    std::remove(temporary.c_str());
    return "cannot rename '" + temporary + "' to '" + path + "': " + g_strerror(err);
  }
  return {};
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
  trim();
}

void BestFaceWriter::trim() {
  while (kept_.size() > 1 && (kept_.size() > settings_.max_files || kept_bytes_ > settings_.max_bytes)) {
    std::remove(kept_.front().path.c_str());
    kept_bytes_ -= kept_.front().bytes;
    kept_.pop_front();
  }
}

}  // namespace taconite::gst

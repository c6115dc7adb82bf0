#include "jsonl_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace taconite::gst {

JsonLinesFile::JsonLinesFile(std::FILE* file, std::string location, bool owned)
    : file_(file), location_(std::move(location)), owned_(owned) {}

JsonLinesFile::~JsonLinesFile() {
  if (owned_) std::fclose(file_);
}

std::unique_ptr<JsonLinesFile> JsonLinesFile::open(const std::string& location, std::string* error) {
  if (location == "-") return std::unique_ptr<JsonLinesFile>(new JsonLinesFile(stdout, "stdout", false));
  // O_NONBLOCK: a FIFO without a reader fails at once (ENXIO) instead of holding the state change
  // until one comes; the writes themselves block as usual (a reader that is slow slows the stream).
  const int fd = ::open(location.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0) {
    *error = "cannot open '" + location + "' for writing: " +
             (errno == ENXIO ? "it is a FIFO (or socket) with no reader; start the reader first" : std::strerror(errno));
    return nullptr;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  std::FILE* file = flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ? nullptr : ::fdopen(fd, "w");
  if (!file) {
    *error = "cannot open '" + location + "' for writing: " + std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<JsonLinesFile>(new JsonLinesFile(file, location, true));
}

bool JsonLinesFile::write_line(const std::string& line, std::string* error) {
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fputc('\n', file_) == EOF ||
      std::fflush(file_) != 0) {
    *error = "cannot write to '" + location_ + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace taconite::gst

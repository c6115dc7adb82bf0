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

Result<std::unique_ptr<JsonLinesFile>> JsonLinesFile::open(const std::string& location) {
  if (location == "-") return std::unique_ptr<JsonLinesFile>(new JsonLinesFile(stdout, "stdout", false));
  // O_NONBLOCK: a FIFO without a reader fails at once (ENXIO) instead of holding the state change
  // until one comes; the writes themselves block as usual (a reader that is slow slows the stream).
  const int fd = ::open(location.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0)
    return Error{ErrorKind::Io,
                 "cannot open '" + location + "' for writing: " +
                     (errno == ENXIO ? "it is a FIFO (or socket) with no reader; start the reader first"
                                     : std::strerror(errno))};
  const int flags = ::fcntl(fd, F_GETFL);
  std::FILE* file = flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ? nullptr : ::fdopen(fd, "w");
  if (!file) {
    Error error{ErrorKind::Io, "cannot open '" + location + "' for writing: " + std::strerror(errno)};
    ::close(fd);
    return error;
  }
  return std::unique_ptr<JsonLinesFile>(new JsonLinesFile(file, location, true));
}

Status JsonLinesFile::write_line(const std::string& line) {
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fputc('\n', file_) == EOF ||
      std::fflush(file_) != 0)
    return Error{ErrorKind::Io, "cannot write to '" + location_ + "': " + std::strerror(errno)};
  return Ok{};
}

}  // namespace taconite::gst

#include "line_reader.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace taconite::gallery_cli {

LineReader::LineReader(int fd, std::size_t max_line_bytes) : fd_(fd), max_(max_line_bytes), buffer_(64 * 1024) {}

Result<bool> LineReader::next(std::string& line) {
  line.clear();
  for (;;) {
    const char* start = buffer_.data() + begin_;
    const char* stop = buffer_.data() + end_;
    const char* newline = std::find(start, stop, '\n');
    const std::size_t take = static_cast<std::size_t>(newline - start);
    if (line.size() + take > max_)
      return Error{ErrorKind::Input, "line longer than " + std::to_string(max_) + " bytes"};
    line.append(start, take);
    begin_ += take;
    if (newline != stop) {
      ++begin_;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return true;
    }
    if (eof_) return !line.empty();  // a last line without "\n"
    const ssize_t got = ::read(fd_, buffer_.data(), buffer_.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Error{ErrorKind::Io, std::string("read failed: ") + std::strerror(errno)};
    begin_ = 0;
    end_ = static_cast<std::size_t>(got);
    eof_ = got == 0;
  }
}

}  // namespace taconite::gallery_cli

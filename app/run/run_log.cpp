#include "run_log.hpp"

#include <unistd.h>

#include <string>

namespace taconite::app {

void log_line(std::string_view line) {
  std::string text(line);
  for (char& c : text)  // one line per event: an element's multi-line debug text stays on it
    if (c == '\n' || c == '\r') c = ' ';
  text += '\n';
  const char* at = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t written = ::write(STDERR_FILENO, at, left);
    if (written <= 0) return;  // stderr gone: nothing else to tell it to
    at += written;
    left -= static_cast<std::size_t>(written);
  }
}

}  // namespace taconite::app

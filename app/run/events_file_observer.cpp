#include "events_file_observer.hpp"

#include <cerrno>
#include <cstring>

#include "run_log.hpp"

namespace taconite::app {

Result<std::unique_ptr<EventsFileObserver>> EventsFileObserver::open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "ae");
  if (!file) return Error{ErrorKind::Io, "storage.events_file " + path + ": " + std::strerror(errno)};
  return std::unique_ptr<EventsFileObserver>(new EventsFileObserver(path, file));
}

EventsFileObserver::~EventsFileObserver() { std::fclose(file_); }

void EventsFileObserver::on_track_event(const TrackEvent& event) {
  const bool ok = std::fwrite(event.document.data(), 1, event.document.size(), file_) == event.document.size() &&
                  std::fputc('\n', file_) != EOF && std::fflush(file_) == 0;
  if (ok) {
    ++written_;
    return;
  }
  if (failed_++ == 0) log_line("storage.events_file " + path_ + ": cannot be written: " + std::strerror(errno));
  std::clearerr(file_);
}

}  // namespace taconite::app

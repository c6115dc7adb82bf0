// The built-in component: every track event appended to storage.events_file as one JSON line (the
// document exactly as taconitepublish wrote it), flushed per line so a reader sees it at once.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "pipeline_observer.hpp"
#include "taconite/error.hpp"

namespace taconite::app {

class EventsFileObserver : public PipelineObserver {
 public:
  // Opens `path` for appending (created when missing); an Io error naming it when it cannot be.
  static Result<std::unique_ptr<EventsFileObserver>> open(const std::string& path);
  ~EventsFileObserver() override;

  void on_track_event(const TrackEvent& event) override;

  std::uint64_t lines_written() const { return written_; }
  std::uint64_t lines_failed() const { return failed_; }  // a full disk: counted, the first one logged

 private:
  EventsFileObserver(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  std::string path_;
  std::FILE* file_;
  std::uint64_t written_ = 0, failed_ = 0;
};

}  // namespace taconite::app

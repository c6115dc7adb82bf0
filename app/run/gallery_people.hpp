// The gallery's people as Home Assistant's person sensors need them: read at start, then again
// whenever the gallery's revision moves (a name given on the web page or with taconite-gallery
// reaches Home Assistant without a restart). The watch looks every few seconds on a thread of its
// own: opening a PostgreSQL gallery may wait on the network, which the runner's main loop must not.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace taconite::app {

// The names in the gallery at `location`, or none (with `why` set) when it cannot be read.
std::vector<std::string> gallery_people(const std::string& location, std::string* why = nullptr);

class GalleryPeopleWatch {
 public:
  // Called on the watch's thread with the gallery's names when its revision moved.
  using Changed = std::function<void(std::vector<std::string>)>;
  // Takes the gallery's revision now, then looks again every `period`.
  GalleryPeopleWatch(std::string location, Changed changed, std::chrono::seconds period = std::chrono::seconds(5));
  ~GalleryPeopleWatch();  // stops the thread (after the look in progress, if any)
  GalleryPeopleWatch(const GalleryPeopleWatch&) = delete;
  GalleryPeopleWatch& operator=(const GalleryPeopleWatch&) = delete;

 private:
  void run(std::int64_t revision);

  const std::string location_;
  const Changed changed_;
  const std::chrono::seconds period_;
  std::mutex lock_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the rest is set
};

}  // namespace taconite::app

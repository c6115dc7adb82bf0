// The gallery's people as Home Assistant's person sensors need them: read at start, then again
// whenever the gallery's revision moves (checked every few seconds on the main loop: a name given on
// the web page or with taconite-gallery reaches Home Assistant without a restart).
#pragma once

#include <glib.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace taconite::app {

// The names in the gallery at `location`, or none (with `why` set) when it cannot be read.
std::vector<std::string> gallery_people(const std::string& location, std::string* why = nullptr);

class GalleryPeopleWatch {
 public:
  using Changed = std::function<void(std::vector<std::string>)>;
  // Calls `changed` on the default main context when the gallery's revision moved, at most every
  // `period_s` seconds; the first look is after `period_s`.
  GalleryPeopleWatch(std::string location, Changed changed, unsigned period_s = 5);
  ~GalleryPeopleWatch();
  GalleryPeopleWatch(const GalleryPeopleWatch&) = delete;
  GalleryPeopleWatch& operator=(const GalleryPeopleWatch&) = delete;

 private:
  static gboolean look(gpointer self);

  std::string location_;
  Changed changed_;
  std::int64_t revision_ = -1;
  guint source_ = 0;
};

}  // namespace taconite::app

#include "track_uid.hpp"

#include <glib.h>

namespace taconite::gst {

std::string new_track_uid() {
  gchar* text = g_uuid_string_random();  // GLib's generator: 122 random bits, never fails
  std::string uid = text;
  g_free(text);
  return uid;
}

}  // namespace taconite::gst

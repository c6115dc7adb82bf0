// The benches drive the taconite elements as an application does: the built plugin loaded from its
// file, its elements made by name and set through their properties, the metadata through
// gst/taconite/*.h. The file is TACONITE_PLUGIN (what the tests set), else the build tree's
// libgsttaconite.so (TACONITE_PLUGIN_FILE, given by bench/meson.build).
#pragma once

#include <gst/gst.h>

#include <cstdio>
#include <cstdlib>

inline bool load_taconite_plugin(const char* bench) {
  const char* file = std::getenv("TACONITE_PLUGIN");
  if (!file || !*file) file = TACONITE_PLUGIN_FILE;
  GError* error = nullptr;
  GstPlugin* plugin = gst_plugin_load_file(file, &error);
  if (!plugin) {
    std::fprintf(stderr, "%s: cannot load the taconite plugin %s: %s\n", bench, file,
                 error ? error->message : "unknown error");
    g_clear_error(&error);
    return false;
  }
  gst_object_unref(plugin);
  return true;
}

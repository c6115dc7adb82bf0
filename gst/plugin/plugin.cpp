// The `taconite` plugin: registers its elements.
#include <gst/gst.h>

#include "gsttaconiteadaface.h"
#include "gsttaconitecamera.h"
#include "gsttaconitedetect.h"
#include "gsttaconiteoverlay.h"
#include "gsttaconitepublish.h"
// Built only with their optional dependency (gst/plugin/meson.build).
#ifdef TACONITE_HAVE_DLIB_ELEMENTS
#include "gsttaconitelandmarks.h"
#include "gsttaconitetrack.h"
#endif
#ifdef TACONITE_HAVE_GALLERY_ELEMENTS
#include "gsttaconiteidentify.h"
#endif

#ifndef PACKAGE
#define PACKAGE "taconite-adaface"
#endif

static gboolean plugin_init(GstPlugin* plugin) {
  gboolean ok = GST_ELEMENT_REGISTER(taconiteadaface, plugin);
  ok &= GST_ELEMENT_REGISTER(taconitecamera, plugin);
  ok &= GST_ELEMENT_REGISTER(taconitedetect, plugin);
#ifdef TACONITE_HAVE_DLIB_ELEMENTS
  ok &= GST_ELEMENT_REGISTER(taconitelandmarks, plugin);
  ok &= GST_ELEMENT_REGISTER(taconitetrack, plugin);
#endif
  ok &= GST_ELEMENT_REGISTER(taconitepublish, plugin);
#ifdef TACONITE_HAVE_GALLERY_ELEMENTS
  ok &= GST_ELEMENT_REGISTER(taconiteidentify, plugin);
#endif
  ok &= GST_ELEMENT_REGISTER(taconiteoverlay, plugin);
  return ok;
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, taconite,
                  "AdaFace face embeddings (NPU, oneDNN CPU and exact CPU backends)", plugin_init,
                  TACONITE_VERSION, "Apache-2.0", "taconite-adaface", "https://github.com/taconite-adaface")

// taconitecamera's enum properties, registered with GLib so gst-inspect lists their values.
#pragma once

#include <glib-object.h>

enum class DropPolicy : int {
  Latest = 0,  // one frame waits for downstream; a newer one replaces it (counted in frames-dropped)
  None = 1,    // every decoded frame goes downstream; the source waits for it (files, tests)
};

enum class RtspProtocols : int {
  Tcp = 0,   // RTP interleaved in the RTSP connection: no UDP ports, no losses, one socket
  Udp = 1,   // RTP over UDP only
  Auto = 2,  // rtspsrc's default: UDP first, TCP when UDP gets nothing
};

GType taconite_camera_drop_get_type();
GType taconite_camera_protocols_get_type();

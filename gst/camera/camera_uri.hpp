// What taconitecamera's `uri` names, checked before anything is opened: the kind of source, whether
// it is live (a camera: reconnected on EOS, frames stamped on arrival) and whether it takes a user
// name and password. GStreamer-free, so the rules are tested on their own.
#pragma once

#include <string>

#include "taconite/error.hpp"

namespace taconite::gst {

enum class CameraSourceKind {
  Rtsp,  // rtsp://, rtsps://: rtspsrc through uridecodebin
  Http,  // http://, https://: MJPEG or HLS through souphttpsrc / hlsdemux
  V4l2,  // v4l2:///dev/videoN: v4l2src on that device
  File,  // file:///path: a recording (not live: its EOS ends the stream)
};

struct CameraUri {
  CameraSourceKind kind = CameraSourceKind::File;
  std::string uri;     // as given (it holds no password: refused)
  std::string device;  // V4l2: the device path
  bool live = true;    // every kind but File
  bool takes_credentials = false;  // Rtsp and Http
  bool tls = false;                // rtsps:// and https://
};

// The longest uri accepted (a camera's address, not a data URI).
inline constexpr std::size_t kMaxCameraUriBytes = 4096;

// `text` checked: a supported scheme with what it needs (a host for the network schemes, an
// absolute path for file:// and v4l2://), no whitespace or control characters, at most
// kMaxCameraUriBytes, and no password in it (it would show in `ps`, logs and messages: use the
// credentials file). An Input error says what is wrong and what is expected.
Result<CameraUri> parse_camera_uri(const std::string& text);

}  // namespace taconite::gst

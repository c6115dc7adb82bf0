#include "camera_uri.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace taconite::gst {

namespace {

constexpr const char* kExpected =
    "expected rtsp://, rtsps://, http://, https://host/..., v4l2:///dev/videoN or file:///absolute/path";

struct Scheme {
  std::string_view name;
  CameraSourceKind kind;
};
constexpr std::array<Scheme, 6> kSchemes{{{"rtsp", CameraSourceKind::Rtsp},
                                          {"rtsps", CameraSourceKind::Rtsp},
                                          {"http", CameraSourceKind::Http},
                                          {"https", CameraSourceKind::Http},
                                          {"v4l2", CameraSourceKind::V4l2},
                                          {"file", CameraSourceKind::File}}};

Error input(const std::string& message) { return Error{ErrorKind::Input, message}; }

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

Result<CameraUri> parse_camera_uri(const std::string& text) {
  if (text.empty()) return input(std::string("no uri is set (") + kExpected + ")");
  if (text.size() > kMaxCameraUriBytes)
    return input("the uri is " + std::to_string(text.size()) + " bytes, more than " +
                 std::to_string(kMaxCameraUriBytes));
  for (unsigned char c : text)
    if (c <= 0x20 || c == 0x7f)
      return input("the uri holds whitespace or a control character (percent-encode it, e.g. %20)");
  const std::size_t colon = text.find("://");
  if (colon == std::string::npos || colon == 0)
    return input(std::string("the uri has no scheme:// (") + kExpected + ")");
  const std::string scheme = lower(std::string_view(text).substr(0, colon));
  const auto known = std::find_if(kSchemes.begin(), kSchemes.end(), [&](const Scheme& s) { return s.name == scheme; });
  if (known == kSchemes.end())
    return input("the uri scheme '" + scheme + "' is not supported (" + kExpected + ")");

  CameraUri out;
  out.kind = known->kind;
  out.uri = text;
  out.live = out.kind != CameraSourceKind::File;
  out.takes_credentials = out.kind == CameraSourceKind::Rtsp || out.kind == CameraSourceKind::Http;
  out.tls = scheme == "rtsps" || scheme == "https";
  const std::string rest = text.substr(colon + 3);  // authority and path
  const std::size_t path_at = rest.find('/');
  const std::string authority = rest.substr(0, path_at);
  if (out.kind == CameraSourceKind::V4l2 || out.kind == CameraSourceKind::File) {
    if (!authority.empty() && !(out.kind == CameraSourceKind::File && lower(authority) == "localhost"))
      return input("'" + text + "' names a host; " + scheme + ":// takes an absolute path: " + scheme + ":///...");
    const std::string path = path_at == std::string::npos ? "" : rest.substr(path_at);
    if (path.size() < 2) return input("'" + text + "' has no path after " + scheme + ":// (" + kExpected + ")");
    if (out.kind == CameraSourceKind::V4l2) {
      if (!path.starts_with("/dev/"))
        return input("'" + text + "' is no device: v4l2:// takes a device under /dev, e.g. v4l2:///dev/video0");
      out.device = path;
    }
    return out;
  }
  // Network: a host is needed; a password in the user info is refused (ps, logs and bus messages
  // would show it), a user name alone is allowed.
  const std::size_t at = authority.rfind('@');
  if (at != std::string::npos && authority.substr(0, at).find(':') != std::string::npos)
    return input("the uri holds a password: put the user name and password in the credentials-file instead (a "
                 "uri shows in ps, logs and messages)");
  const std::string host = at == std::string::npos ? authority : authority.substr(at + 1);
  if (host.empty() || host.front() == ':') return input("'" + text + "' has no host (" + kExpected + ")");
  return out;
}

}  // namespace taconite::gst

// The JSON API's routes (docs/app.md, "Web page"), without HTTP: a request already read and
// bounded by the server (web_server.cpp) in, an ApiReply out. Runs on the server's worker threads.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "api_reply.hpp"
#include "face_library.hpp"
#include "live_state.hpp"
#include "web_options.hpp"

namespace taconite::app {

struct ApiRequest {
  std::string method;  // "GET", "POST", "DELETE"
  std::string path;    // decoded path, e.g. /api/people
  std::map<std::string, std::string> query;
  std::string content_type;
  std::vector<std::uint8_t> body;  // a raw body (JSON, or an image)
  std::vector<UploadedFile> files;  // multipart/form-data files, at most max_files_per_request
  std::size_t dropped_files = 0;    // files beyond that bound (not read)
};

struct ApiContext {
  FaceLibrary& library;
  const LiveState& live;
  const WebServerOptions& options;
};

// 404 for an unknown route, 405 for a known path with another method.
ApiReply route_api(const ApiContext& context, const ApiRequest& request);

// A snapshot file name the server serves under /snapshots/: letters, digits, '.', '_', '-', not
// starting with '.', at most 255 bytes (no path: nothing outside the snapshot directory).
bool snapshot_file_name(const std::string& name);
// A snapshot's path under the snapshot directory as the server serves it: at most 4 components
// joined by '/' (the snapshot writer's CAMERA/DATE/FILE), each a snapshot_file_name.
bool snapshot_relative_path(const std::string& path);
// An event's "snapshot" as served under /snapshots/: a path relative to `snapshot_dir`, or an
// absolute one inside it; "" for anything else.
std::string served_snapshot(const std::string& snapshot, const std::string& snapshot_dir);

// The events query of GET /api/events from its parameters (person, camera, since, limit); an
// Input error naming the bad parameter.
Result<EventQuery> parse_event_query(const std::map<std::string, std::string>& query);

}  // namespace taconite::app

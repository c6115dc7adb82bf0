// Test host for the web page (app/web): serves a given gallery as taconite-run would, without
// cameras. The event history is a fake: a JSON array file, filtered here by the EventQuery (as the
// real history would be). Camera states are given on the command line and passed to the observer
// calls, so the Cameras tab has something to show. Prints "listening on URL" and serves until
// SIGTERM or SIGINT.
#include <glib-unix.h>
#include <json-glib/json-glib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "json_parse.hpp"
#include "json_write.hpp"
#include "web_server.hpp"

using namespace taconite;

namespace {

// The events of `file` that pass `q`, newest first (as given: the file lists them newest first).
std::string filter_events(const std::string& file, const app::EventQuery& q) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  Result<json::JsonNodePtr> doc = json::parse_json(text.str());
  if (!doc || !JSON_NODE_HOLDS_ARRAY(doc.value().get())) return "[]";
  JsonArray* all = json_node_get_array(doc.value().get());
  JsonArray* kept = json_array_new();
  for (guint i = 0; i < json_array_get_length(all) && json_array_get_length(kept) < q.limit; ++i) {
    JsonObject* e = json_array_get_object_element(all, i);
    if (!e) continue;
    const char* label = json_object_has_member(e, "label") && !json_object_get_null_member(e, "label")
                            ? json_object_get_string_member(e, "label") : nullptr;
    const char* stream = json_object_has_member(e, "stream") ? json_object_get_string_member(e, "stream") : nullptr;
    const double epoch = json_object_has_member(e, "epoch_s") ? json_object_get_double_member(e, "epoch_s") : 0;
    if (q.person && (!label || *q.person != label)) continue;
    if (q.camera && (!stream || *q.camera != stream)) continue;
    if (q.since_epoch_s && epoch < static_cast<double>(*q.since_epoch_s)) continue;
    json_array_add_element(kept, json_node_copy(json_array_get_element(all, i)));
  }
  JsonNode* out = json_node_alloc();
  json_node_init_array(out, kept);
  json_array_unref(kept);
  std::string text_out = json::write_json(out);
  json_node_unref(out);
  return text_out;
}

int usage() {
  std::fprintf(stderr,
               "usage: web_host --gallery G --model M [--model-proc J] --detector YUNET [--listen HOST:PORT]\n"
               "  [--credentials FILE] [--snapshots DIR] [--events FILE.json] [--camera NAME=STATE[:DETAIL]]...\n"
               "  [--max-upload-bytes N] [--max-image-pixels N] [--max-files N] [--max-concurrent N]\n"
               "  [--threshold T] [--backend B] [--shared-model yes|no]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  app::WebServerOptions o;
  o.listen = "127.0.0.1:0";
  std::string events_file;
  std::vector<std::string> cameras;
  bool shared = false;  // load the model here and hand it over, as taconite-run shares its engine's
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    const std::string v = argv[++i];
    if (a == "--gallery") o.gallery = v;
    else if (a == "--model") o.model = v;
    else if (a == "--model-proc") o.model_proc = v;
    else if (a == "--detector") o.detector = v;
    else if (a == "--listen") o.listen = v;
    else if (a == "--credentials") o.credentials_file = v;
    else if (a == "--snapshots") o.snapshot_dir = v;
    else if (a == "--events") events_file = v;
    else if (a == "--camera") cameras.push_back(v);
    else if (a == "--backend") o.backend = v;
    else if (a == "--shared-model") shared = v == "yes";
    else if (a == "--threshold") o.match_threshold = std::atof(v.c_str());
    else if (a == "--max-upload-bytes") o.bounds.max_upload_bytes = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--max-image-pixels") o.bounds.max_image_pixels = std::strtoll(v.c_str(), nullptr, 10);
    else if (a == "--max-files") o.bounds.max_files_per_request = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--max-concurrent") o.bounds.max_concurrent_recognitions = std::strtoull(v.c_str(), nullptr, 10);
    else return usage();
  }
  if (!events_file.empty())
    o.events = [events_file](const app::EventQuery& q) { return filter_events(events_file, q); };
  if (shared) {
    LoadOptions load;
    load.model_proc = o.model_proc;
    Result<std::shared_ptr<const Model>> model = Model::load(o.model, load);
    if (!model) {
      std::fprintf(stderr, "web_host: %s\n", model.error().message.c_str());
      return 1;
    }
    o.shared_model = model.value();
  }
  Result<std::unique_ptr<app::WebServer>> server = app::WebServer::start(o);
  if (!server) {
    std::fprintf(stderr, "web_host: %s\n", server.error().message.c_str());
    return 1;
  }
  for (const std::string& c : cameras) {
    const std::size_t eq = c.find('='), colon = c.find(':', eq);
    const std::string name = c.substr(0, eq);
    const std::string state = c.substr(eq + 1, colon == std::string::npos ? colon : colon - eq - 1);
    const std::string detail = colon == std::string::npos ? "" : c.substr(colon + 1);
    const app::CameraState s = state == "streaming" ? app::CameraState::Streaming
                               : state == "lost"    ? app::CameraState::Lost
                               : state == "stopped" ? app::CameraState::Stopped : app::CameraState::Starting;
    server.value()->on_camera_state(name, s, detail);
    app::TrackEvent e;
    e.camera = name;
    e.kind = "end";
    e.document = R"({"schema":"taconite-tracks/1","stream":")" + name + R"(","event":"end","label":null})";
    server.value()->on_track_event(e);
  }
  std::printf("listening on %s\n", server.value()->url().c_str());
  std::fflush(stdout);
  GMainLoop* loop = g_main_loop_new(nullptr, FALSE);
  const auto quit = [](gpointer l) -> gboolean {
    g_main_loop_quit(static_cast<GMainLoop*>(l));
    return G_SOURCE_REMOVE;
  };
  g_unix_signal_add(SIGTERM, quit, loop);
  g_unix_signal_add(SIGINT, quit, loop);
  g_main_loop_run(loop);
  g_main_loop_unref(loop);
  server.value().reset();
  return 0;
}

// A stand-in for taconite-run around HomeAssistantMqtt, for ha_mqtt_test.py: one JSON command per
// line on stdin, "ok" (or a JSON answer) per line on stdout once done, so the test knows what was
// handed over. Commands:
//   {"cmd":"start","options":{...HomeAssistantOptions members...}}   (first; {"error":...} and exit 2 on refusal)
//   {"cmd":"event","document":{...a taconite-tracks/1 event...}}    (on_track_event)
//   {"cmd":"camera","camera":"door","state":"streaming|lost|stopped|starting","detail":"..."}
//   {"cmd":"people","people":["alice", ...]}                        (set_people)
//   {"cmd":"cameras","cameras":["door", ...]}                       (set_cameras; {"error":...} on refusal)
//   {"cmd":"snapshot","camera":"door","uid":"...","path":"x.jpg"}   (publish_snapshot)
//   {"cmd":"counters"}  -> {"events":..,"people_refused":..,..,"published":..,"dropped":..}
//   {"cmd":"time-events","count":N,"document":{...}}  -> {"us_per_event":..} (N new tracks' events)
//   {"cmd":"stop"}
#include <json-glib/json-glib.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "home_assistant.hpp"
#include "json_write.hpp"

using taconite::app::CameraState;
using taconite::app::HomeAssistantMqtt;
using taconite::app::HomeAssistantOptions;
using taconite::app::TrackEvent;

namespace {

std::string text(JsonObject* o, const char* name, const std::string& fallback = "") {
  if (!json_object_has_member(o, name) || json_object_get_null_member(o, name)) return fallback;
  return json_object_get_string_member(o, name);
}

std::vector<std::string> strings(JsonObject* o, const char* name) {
  std::vector<std::string> out;
  if (!json_object_has_member(o, name)) return out;
  JsonArray* a = json_object_get_array_member(o, name);
  for (guint i = 0; i < json_array_get_length(a); ++i) out.emplace_back(json_array_get_string_element(a, i));
  return out;
}

HomeAssistantOptions options_of(JsonObject* o) {
  HomeAssistantOptions options;
  options.host = text(o, "host", options.host);
  if (json_object_has_member(o, "port")) options.port = static_cast<int>(json_object_get_int_member(o, "port"));
  options.credentials_file = text(o, "credentials_file");
  options.tls_ca = text(o, "tls_ca");
  options.tls_cert = text(o, "tls_cert");
  options.tls_key = text(o, "tls_key");
  options.topic_prefix = text(o, "topic_prefix", options.topic_prefix);
  options.discovery_prefix = text(o, "discovery_prefix", options.discovery_prefix);
  options.client_id = text(o, "client_id", options.client_id);
  if (json_object_has_member(o, "person_timeout_s"))
    options.person_timeout_s = json_object_get_double_member(o, "person_timeout_s");
  if (json_object_has_member(o, "max_entities"))
    options.max_entities = static_cast<std::size_t>(json_object_get_int_member(o, "max_entities"));
  if (json_object_has_member(o, "max_queue_bytes"))
    options.max_queue_bytes = static_cast<std::size_t>(json_object_get_int_member(o, "max_queue_bytes"));
  if (json_object_has_member(o, "max_snapshot_bytes"))
    options.max_snapshot_bytes = static_cast<std::size_t>(json_object_get_int_member(o, "max_snapshot_bytes"));
  if (json_object_has_member(o, "max_open_tracks"))
    options.max_open_tracks = static_cast<std::size_t>(json_object_get_int_member(o, "max_open_tracks"));
  options.cameras = strings(o, "cameras");
  options.people = strings(o, "people");
  options.sw_version = text(o, "sw_version");
  options.log = [](bool warning, const std::string& line) {
    std::cerr << (warning ? "warning: " : "info: ") << line << std::endl;
  };
  return options;
}

double number(JsonObject* o, const char* name) {
  return json_object_has_member(o, name) && !json_object_get_null_member(o, name)
             ? json_object_get_double_member(o, name)
             : 0.0;
}

// The members the runner's parser fills (pipeline_observer.hpp), and the document as it came.
TrackEvent event_of(JsonNode* node) {
  JsonObject* o = json_node_get_object(node);
  TrackEvent e;
  e.camera = text(o, "stream");
  e.kind = text(o, "event");
  e.uid = text(o, "uid");
  e.track_id = json_object_get_int_member(o, "track_id");
  e.epoch_s = number(o, "epoch_s");
  e.label_state = text(o, "label_state");
  if (json_object_has_member(o, "label") && !json_object_get_null_member(o, "label")) e.label = text(o, "label");
  e.reason = text(o, "reason");
  e.first_epoch_s = number(o, "first_epoch_s");
  e.last_epoch_s = number(o, "last_epoch_s");
  e.document = taconite::json::write_json(node);
  return e;
}

CameraState state_of(const std::string& name) {
  if (name == "streaming") return CameraState::Streaming;
  if (name == "lost") return CameraState::Lost;
  if (name == "stopped") return CameraState::Stopped;
  return CameraState::Starting;
}

}  // namespace

int main() {
  std::unique_ptr<HomeAssistantMqtt> ha;
  std::string line;
  while (std::getline(std::cin, line)) {
    JsonParser* parser = json_parser_new();
    if (!json_parser_load_from_data(parser, line.c_str(), static_cast<gssize>(line.size()), nullptr)) {
      std::cerr << "not JSON: " << line << std::endl;
      return 3;
    }
    JsonObject* command = json_node_get_object(json_parser_get_root(parser));
    const std::string cmd = text(command, "cmd");
    if (cmd == "start") {
      auto started = HomeAssistantMqtt::start(options_of(json_object_get_object_member(command, "options")));
      if (!started) {
        JsonNode* message = json_node_new(JSON_NODE_VALUE);
        json_node_set_string(message, started.error().message.c_str());
        std::cout << "{\"error\":" << taconite::json::write_json(message) << "}" << std::endl;
        json_node_unref(message);
        g_object_unref(parser);
        return 2;
      }
      ha = std::move(started).value();
    } else if (!ha) {
      std::cerr << "start first" << std::endl;
      return 3;
    } else if (cmd == "event") {
      ha->on_track_event(event_of(json_object_get_member(command, "document")));
    } else if (cmd == "camera") {
      ha->on_camera_state(text(command, "camera"), state_of(text(command, "state")), text(command, "detail"));
    } else if (cmd == "people") {
      ha->set_people(strings(command, "people"));
    } else if (cmd == "cameras") {
      if (taconite::Status s = ha->set_cameras(strings(command, "cameras")); !s) {
        JsonNode* message = json_node_new(JSON_NODE_VALUE);
        json_node_set_string(message, s.error().message.c_str());
        std::cout << "{\"error\":" << taconite::json::write_json(message) << "}" << std::endl;
        json_node_unref(message);
        g_object_unref(parser);
        continue;
      }
    } else if (cmd == "snapshot") {
      std::ifstream file(text(command, "path"), std::ios::binary);
      std::string jpeg((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
      ha->publish_snapshot(text(command, "camera"), text(command, "uid"), std::move(jpeg));
    } else if (cmd == "counters") {
      const auto& c = ha->counters();
      const auto& p = ha->publish_counters();
      std::cout << "{\"events\":" << c.events << ",\"unknown_camera\":" << c.unknown_camera
                << ",\"people_refused\":" << c.people_refused << ",\"snapshots_refused\":" << c.snapshots_refused
                << ",\"tracks_refused\":" << c.tracks_refused << ",\"published\":" << p.published
                << ",\"dropped\":" << p.dropped << ",\"connected\":" << (ha->connected() ? "true" : "false") << "}"
                << std::endl;
      g_object_unref(parser);
      continue;
    } else if (cmd == "time-events") {  // the caller's cost of on_track_event: N events of new tracks
      TrackEvent e = event_of(json_object_get_member(command, "document"));
      const gint64 n = json_object_get_int_member(command, "count");
      const gint64 began = g_get_monotonic_time();
      for (gint64 i = 0; i < n; ++i) {
        e.uid = "uid-" + std::to_string(i);
        ha->on_track_event(e);
      }
      const double us = static_cast<double>(g_get_monotonic_time() - began) / static_cast<double>(n);
      std::cout << "{\"us_per_event\":" << us << "}" << std::endl;
      g_object_unref(parser);
      continue;
    } else if (cmd == "stop") {
      ha->stop();
    } else {
      std::cerr << "unknown command " << cmd << std::endl;
      return 3;
    }
    g_object_unref(parser);
    std::cout << "ok" << std::endl;
  }
  return 0;
}

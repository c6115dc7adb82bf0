#include "track_event_parse.hpp"

#include <cmath>
#include <optional>

#include "json_parse.hpp"

namespace taconite::app {

namespace {

Error input(std::string message) { return Error{ErrorKind::Input, std::move(message)}; }

std::optional<std::string> string_member(JsonObject* object, const char* name) {
  JsonNode* node = json_object_get_member(object, name);
  if (!node || !JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_STRING) return std::nullopt;
  return std::string(json_node_get_string(node));
}

std::optional<double> number_member(JsonObject* object, const char* name) {
  JsonNode* node = json_object_get_member(object, name);
  if (!node || !JSON_NODE_HOLDS_VALUE(node)) return std::nullopt;
  const GType type = json_node_get_value_type(node);
  if (type == G_TYPE_INT64) return static_cast<double>(json_node_get_int(node));
  if (type == G_TYPE_DOUBLE) return json_node_get_double(node);
  return std::nullopt;
}

// `epoch_name` when the document has it, else `iso_name` converted; nullopt when neither is there.
Result<std::optional<double>> epoch_member(JsonObject* object, const char* epoch_name, const char* iso_name) {
  if (std::optional<double> epoch = number_member(object, epoch_name)) return std::optional<double>(*epoch);
  const std::optional<std::string> iso = string_member(object, iso_name);
  if (!iso) return std::optional<double>();
  Result<double> converted = iso_to_epoch_s(*iso);
  if (!converted) return input(std::string(iso_name) + ": " + converted.error().message);
  return std::optional<double>(converted.value());
}

}  // namespace

Result<double> iso_to_epoch_s(const std::string& iso) {
  GDateTime* parsed = g_date_time_new_from_iso8601(iso.c_str(), nullptr);
  if (!parsed) return input("'" + iso.substr(0, 64) + "' is not an ISO 8601 time with a zone");
  const double epoch = static_cast<double>(g_date_time_to_unix(parsed)) + g_date_time_get_microsecond(parsed) / 1e6;
  g_date_time_unref(parsed);
  return epoch;
}

Result<TrackEvent> parse_track_event(const std::string& document) {
  Result<json::JsonNodePtr> parsed = json::parse_json(document);
  if (!parsed) return input("not JSON: " + parsed.error().message);
  JsonNode* root = parsed.value().get();
  if (!JSON_NODE_HOLDS_OBJECT(root)) return input("not a JSON object");
  JsonObject* object = json_node_get_object(root);
  if (string_member(object, "schema") != "taconite-tracks/1") return input("schema is not taconite-tracks/1");
  TrackEvent event;
  const std::optional<std::string> stream = string_member(object, "stream");
  const std::optional<std::string> kind = string_member(object, "event");
  const std::optional<std::string> uid = string_member(object, "uid");
  const std::optional<double> track_id = number_member(object, "track_id");
  if (!stream || !kind || !uid || !track_id) return input("stream, event, uid or track_id missing");
  if (*kind != "new" && *kind != "update" && *kind != "end") return input("event '" + *kind + "' is not known");
  event.camera = *stream;
  event.kind = *kind;
  event.uid = *uid;
  event.track_id = static_cast<std::int64_t>(*track_id);
  Result<std::optional<double>> epoch = epoch_member(object, "epoch_s", "utc");
  if (!epoch) return epoch.error();
  if (!epoch.value()) return input("neither epoch_s nor utc");
  event.epoch_s = *epoch.value();
  event.label_state = string_member(object, "label_state").value_or("");
  event.label = string_member(object, "label");
  if (std::optional<double> id = number_member(object, "label_id")) event.label_id = static_cast<std::int64_t>(*id);
  event.confidence = number_member(object, "confidence");
  if (event.kind == "end") {
    event.reason = string_member(object, "reason").value_or("");
    Result<std::optional<double>> first = epoch_member(object, "first_epoch_s", "first_utc");
    Result<std::optional<double>> last = epoch_member(object, "last_epoch_s", "last_utc");
    if (!first) return first.error();
    if (!last) return last.error();
    event.first_epoch_s = first.value().value_or(event.epoch_s);
    event.last_epoch_s = last.value().value_or(event.epoch_s);
    event.dwell_s = number_member(object, "dwell_s");
    event.frames = static_cast<std::int64_t>(number_member(object, "frames").value_or(0));
  }
  event.document = document;
  return event;
}

}  // namespace taconite::app

// The event log's JSON (what the web page's API serves and `taconite-gallery events --json` prints)
// and its ISO 8601 times.
#include <json-glib/json-glib.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <regex>

#include "json_write.hpp"
#include "track_event_log.hpp"

namespace taconite::gallery {

namespace {

// 0000-01-01 and 10000-01-01 in Unix seconds: the years ISO 8601 writes with four digits.
constexpr double kEarliestIso = -62167219200.0;
constexpr double kEndOfIso = 253402300800.0;

void add_text(JsonObject* o, const char* name, const std::string& value) {
  json_object_set_string_member(o, name, value.c_str());
}
void add_optional(JsonObject* o, const char* name, const std::optional<double>& value) {
  if (value)
    json_object_set_double_member(o, name, *value);
  else
    json_object_set_null_member(o, name);
}

JsonNode* event_node(const StoredTrackEvent& e) {
  JsonObject* o = json_object_new();
  json_object_set_int_member(o, "id", e.id);
  json_object_set_double_member(o, "epoch_s", e.epoch_s);
  add_text(o, "utc", epoch_to_iso(e.epoch_s));
  add_text(o, "camera", e.camera);
  add_text(o, "kind", e.kind);
  add_text(o, "uid", e.uid);
  json_object_set_int_member(o, "track_id", e.track_id);
  if (e.label_state.empty())
    json_object_set_null_member(o, "label_state");
  else
    add_text(o, "label_state", e.label_state);
  if (e.label)
    add_text(o, "label", *e.label);
  else
    json_object_set_null_member(o, "label");
  if (e.label_id)
    json_object_set_int_member(o, "label_id", *e.label_id);
  else
    json_object_set_null_member(o, "label_id");
  add_optional(o, "confidence", e.confidence);
  add_text(o, "reason", e.reason);
  add_optional(o, "first_epoch_s", e.first_epoch_s);
  add_optional(o, "last_epoch_s", e.last_epoch_s);
  add_optional(o, "dwell_s", e.dwell_s);
  json_object_set_int_member(o, "frames", e.frames);
  if (e.snapshot.empty())
    json_object_set_null_member(o, "snapshot");
  else
    add_text(o, "snapshot", e.snapshot);
  JsonNode* node = json_node_new(JSON_NODE_OBJECT);
  json_node_take_object(node, o);
  return node;
}

}  // namespace

std::string event_to_json(const StoredTrackEvent& event) {
  JsonNode* node = event_node(event);
  std::string text = json::write_json(node);
  json_node_unref(node);
  return text;
}

std::string events_to_json(const std::vector<StoredTrackEvent>& events) {
  JsonArray* array = json_array_sized_new(static_cast<guint>(events.size()));
  for (const StoredTrackEvent& e : events) json_array_add_element(array, event_node(e));
  JsonNode* node = json_node_new(JSON_NODE_ARRAY);
  json_node_take_array(node, array);
  std::string text = json::write_json(node);
  json_node_unref(node);
  return text;
}

std::string epoch_to_iso(double epoch_s) {
  if (!std::isfinite(epoch_s) || epoch_s < kEarliestIso || epoch_s >= kEndOfIso) return "";
  const double whole = std::floor(epoch_s);
  auto micros = static_cast<long>(std::llround((epoch_s - whole) * 1e6));
  auto seconds = static_cast<std::time_t>(whole);
  if (micros >= 1000000) micros -= 1000000, seconds += 1;
  std::tm tm{};
  if (!gmtime_r(&seconds, &tm)) return "";
  char text[96];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, micros);
  return text;
}

std::optional<double> iso_to_epoch(const std::string& text) {
  if (text.size() > 40) return std::nullopt;
  static const std::regex kIso(
      R"((\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?)");
  std::smatch m;
  if (!std::regex_match(text, m, kIso)) return std::nullopt;
  auto number = [&](int i) { return m[i].matched ? std::stoi(m[i].str()) : 0; };
  const int year = number(1), month = number(2), day = number(3), hour = number(4), minute = number(5),
            second = number(6);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  // Days from 1970-01-01 (Howard Hinnant's days_from_civil).
  const int y = year - (month <= 2 ? 1 : 0);
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const double days = static_cast<double>(era) * 146097 + doe - 719468;
  double epoch = days * 86400 + hour * 3600 + minute * 60 + second;
  if (m[7].matched) epoch += std::stod(m[7].str());
  if (m[8].matched && m[8].str() != "Z") {
    const std::string zone = m[8].str();
    const int sign = zone[0] == '-' ? -1 : 1;
    const int zh = std::stoi(zone.substr(1, 2));
    const int zm = std::stoi(zone.substr(zone.size() - 2));
    if (zh > 23 || zm > 59) return std::nullopt;
    epoch -= sign * (zh * 3600 + zm * 60);
  }
  return epoch;
}

}  // namespace taconite::gallery

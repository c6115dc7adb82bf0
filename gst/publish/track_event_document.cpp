#include "track_event_document.hpp"

#include <json-glib/json-glib.h>

#include <cmath>

#include "face_document.hpp"
#include "json_write.hpp"

namespace taconite::gst {

namespace {

void add_member(JsonBuilder* b, const char* name, const std::string& value) {
  json_builder_set_member_name(b, name);
  json_builder_add_string_value(b, value.c_str());
}

void add_double(JsonBuilder* b, const char* name, std::optional<double> value) {
  json_builder_set_member_name(b, name);
  if (value && std::isfinite(*value))
    json_builder_add_double_value(b, *value);
  else
    json_builder_add_null_value(b);
}

// Seconds since 1970 as a number beside each ISO time, the same instant (microseconds survive: a
// double keeps them exactly enough to round back to the same microsecond for centuries).
void add_epoch(JsonBuilder* b, const char* name, gint64 utc_us) {
  json_builder_set_member_name(b, name);
  json_builder_add_double_value(b, static_cast<double>(utc_us) / 1e6);
}

void add_pts(JsonBuilder* b, const char* name, std::optional<std::uint64_t> pts) {
  json_builder_set_member_name(b, name);
  if (pts)
    json_builder_add_int_value(b, static_cast<gint64>(*pts));
  else
    json_builder_add_null_value(b);
}

// The identity members: label_state (null without taconiteidentify), and label, label_id and
// confidence once decided (null before).
void add_identity(JsonBuilder* b, const std::optional<RoiIdentity>& identity) {
  json_builder_set_member_name(b, "label_state");
  if (identity && !identity->label_state.empty())
    json_builder_add_string_value(b, identity->label_state.c_str());
  else
    json_builder_add_null_value(b);
  json_builder_set_member_name(b, "label");
  if (identity && identity->label)
    json_builder_add_string_value(b, identity->label->c_str());
  else
    json_builder_add_null_value(b);
  json_builder_set_member_name(b, "label_id");
  if (identity && identity->label_id)
    json_builder_add_int_value(b, *identity->label_id);
  else
    json_builder_add_null_value(b);
  add_double(b, "confidence", identity ? identity->confidence : std::nullopt);
}

void add_best_face(JsonBuilder* b, const std::optional<EncodedFace>& face) {
  json_builder_set_member_name(b, "best_face");
  if (!face) {
    json_builder_add_null_value(b);
    return;
  }
  json_builder_begin_object(b);
  add_double(b, "quality", face->quality);
  if (!face->path.empty()) add_member(b, "path", face->path);
  if (!face->base64.empty()) add_member(b, "jpeg_base64", face->base64);
  json_builder_end_object(b);
}

const char* event_name(TrackEvent::Kind kind) {
  switch (kind) {
    case TrackEvent::Kind::New: return "new";
    case TrackEvent::Kind::Update: return "update";
    case TrackEvent::Kind::End: return "end";
  }
  return "update";
}

}  // namespace

std::string track_event_document(const TrackEvent& event, const std::string& stream, json::Repairs* repairs) {
  const OpenTrack& track = event.track;
  JsonBuilder* b = json_builder_new();
  json_builder_begin_object(b);
  add_member(b, "schema", kTracksSchema);
  add_member(b, "event", event_name(event.kind));
  add_member(b, "stream", stream);
  json_builder_set_member_name(b, "track_id");
  json_builder_add_int_value(b, track.track_id);
  add_member(b, "uid", track.uid);
  add_member(b, "utc", utc_text(event.at.utc_us));
  add_epoch(b, "epoch_s", event.at.utc_us);
  add_pts(b, "pts_ns", event.at.pts_ns);
  add_identity(b, track.identity);
  add_best_face(b, track.best_face);
  if (event.kind == TrackEvent::Kind::End) {
    add_member(b, "reason", event.end_reason.empty() ? "lost" : event.end_reason);
    add_member(b, "first_utc", utc_text(track.first.utc_us));
    add_member(b, "last_utc", utc_text(track.last.utc_us));
    add_epoch(b, "first_epoch_s", track.first.utc_us);
    add_epoch(b, "last_epoch_s", track.last.utc_us);
    add_pts(b, "first_pts_ns", track.first.pts_ns);
    add_pts(b, "last_pts_ns", track.last.pts_ns);
    std::optional<double> dwell;
    if (track.first.pts_ns && track.last.pts_ns && *track.last.pts_ns >= *track.first.pts_ns)
      dwell = static_cast<double>(*track.last.pts_ns - *track.first.pts_ns) / 1e9;
    add_double(b, "dwell_s", dwell);
    json_builder_set_member_name(b, "frames");
    json_builder_add_int_value(b, static_cast<gint64>(track.frames));
    json_builder_set_member_name(b, "identified");
    if (track.identified)
      json_builder_add_boolean_value(b, *track.identified);
    else
      json_builder_add_null_value(b);
  }
  json_builder_end_object(b);
  JsonNode* root = json_builder_get_root(b);
  std::string document = json::write_json(root, repairs);
  json_node_unref(root);
  g_object_unref(b);
  return document;
}

}  // namespace taconite::gst

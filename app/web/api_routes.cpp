#include "api_routes.hpp"

#include <charconv>
#include <optional>

#include "identity_fields.hpp"
#include "json_parse.hpp"
#include "json_write.hpp"

namespace taconite::app {

namespace {

std::optional<std::int64_t> parse_int(const std::string& text) {
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// "/api/templates/17/thumbnail.jpg" with prefix "/api/templates/" and suffix "/thumbnail.jpg" -> 17.
std::optional<std::int64_t> id_between(const std::string& path, const std::string& prefix, const std::string& suffix) {
  if (path.size() <= prefix.size() + suffix.size() || path.compare(0, prefix.size(), prefix) != 0 ||
      path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  const std::optional<std::int64_t> id =
      parse_int(path.substr(prefix.size(), path.size() - prefix.size() - suffix.size()));
  if (!id || *id < 1) return std::nullopt;
  return id;
}

// The string members a mutation's JSON body must have (an object of strings), or the error to answer.
struct Fields {
  std::map<std::string, std::string> values;
  std::optional<ApiReply> error;
};

Fields json_fields(const ApiRequest& r, std::initializer_list<const char*> names) {
  Fields f;
  if (r.content_type != "application/json") {
    f.error = error_reply(415, "the body must be JSON (Content-Type: application/json)");
    return f;
  }
  Result<json::JsonNodePtr> doc =
      json::parse_json(std::string_view(reinterpret_cast<const char*>(r.body.data()), r.body.size()));
  if (!doc) {
    f.error = error_reply(400, "the body is not valid JSON: " + doc.error().message);
    return f;
  }
  if (!JSON_NODE_HOLDS_OBJECT(doc.value().get())) {
    f.error = error_reply(400, "the body must be a JSON object, not " + json::json_kind(doc.value().get()));
    return f;
  }
  JsonObject* o = json_node_get_object(doc.value().get());
  for (const char* name : names) {
    JsonNode* member = json_object_get_member(o, name);
    if (!member || !JSON_NODE_HOLDS_VALUE(member) || json_node_get_value_type(member) != G_TYPE_STRING) {
      f.error = error_reply(400, std::string("the body needs the string member \"") + name + "\"");
      return f;
    }
    f.values[name] = json_node_get_string(member);
  }
  return f;
}

ApiReply events(const ApiContext& c, const ApiRequest& r) {
  Result<EventQuery> q = parse_event_query(r.query);
  if (!q) return error_reply(400, q.error().message);
  if (!c.options.events) return {200, "application/json", "[]"};
  std::string text;
  try {
    text = c.options.events(q.value());
  } catch (...) {
    return error_reply(500, "the event history failed");
  }
  // Only a JSON array reaches the page; an event's snapshot file gets the URL it is served at.
  Result<json::JsonNodePtr> doc = json::parse_json(text);
  if (!doc || !JSON_NODE_HOLDS_ARRAY(doc.value().get()))
    return error_reply(500, "the event history did not answer a JSON array");
  JsonArray* events = json_node_get_array(doc.value().get());
  for (guint i = 0; i < json_array_get_length(events); ++i) {
    JsonNode* e = json_array_get_element(events, i);
    if (!JSON_NODE_HOLDS_OBJECT(e)) continue;
    JsonObject* o = json_node_get_object(e);
    JsonNode* snapshot = json_object_get_member(o, "snapshot");
    if (!snapshot || !JSON_NODE_HOLDS_VALUE(snapshot) || json_node_get_value_type(snapshot) != G_TYPE_STRING) continue;
    const std::string served = served_snapshot(json_node_get_string(snapshot), c.options.snapshot_dir);
    if (!served.empty()) json_object_set_string_member(o, "snapshot_url", ("/snapshots/" + served).c_str());
  }
  return {200, "application/json", json::write_json(doc.value().get())};
}

}  // namespace

bool snapshot_file_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name[0] == '.') return false;
  for (char c : name)
    if (!(g_ascii_isalnum(c) || c == '.' || c == '_' || c == '-')) return false;
  return true;
}

bool snapshot_relative_path(const std::string& path) {
  std::size_t components = 0, start = 0;
  while (true) {
    const std::size_t slash = path.find('/', start);
    if (++components > 4 || !snapshot_file_name(path.substr(start, slash - start))) return false;
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}

std::string served_snapshot(const std::string& snapshot, const std::string& snapshot_dir) {
  std::string relative = snapshot;
  if (!snapshot.empty() && snapshot.front() == '/') {
    std::string dir = snapshot_dir;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (dir.empty() || !snapshot.starts_with(dir + "/")) return "";
    relative = snapshot.substr(dir.size() + 1);
  }
  return snapshot_relative_path(relative) ? relative : "";
}

Result<EventQuery> parse_event_query(const std::map<std::string, std::string>& query) {
  EventQuery q;
  for (const auto& [key, value] : query) {
    if (key == "person" || key == "camera") {
      if (value.empty()) continue;
      if (gallery::Status s = gallery::check_name_like(key, value); !s) return s.error();
      (key == "person" ? q.person : q.camera) = value;
    } else if (key == "since") {
      if (value.empty()) continue;
      const std::optional<std::int64_t> v = parse_int(value);
      if (!v || *v < 0) return Error{ErrorKind::Input, "since: seconds since 1970, not \"" +
                                                           gallery::printable_source(value.substr(0, 40)) + "\""};
      q.since_epoch_s = *v;
    } else if (key == "limit") {
      const std::optional<std::int64_t> v = parse_int(value);
      if (!v || *v < 1 || *v > static_cast<std::int64_t>(kMaxEventLimit))
        return Error{ErrorKind::Input, "limit: 1.." + std::to_string(kMaxEventLimit)};
      q.limit = static_cast<std::size_t>(*v);
    } else {
      return Error{ErrorKind::Input, "unknown parameter \"" + gallery::printable_source(key.substr(0, 40)) +
                                         "\" (person, camera, since, limit)"};
    }
  }
  return q;
}

ApiReply route_api(const ApiContext& c, const ApiRequest& r) {
  const std::string& p = r.path;
  const bool get = r.method == "GET", post = r.method == "POST";
  const auto wrong_method = [&] { return error_reply(405, r.method + " is not allowed on " + p); };
  if (p == "/api/people") return get ? c.library.people() : wrong_method();
  if (p == "/api/people/photos") {
    if (!post) return wrong_method();
    const auto name = r.query.find("name");
    if (name == r.query.end()) return error_reply(400, "add photos with ?name=PERSON");
    if (r.files.empty() && !r.body.empty()) {
      const UploadedFile one[] = {{"body", r.body}};
      return c.library.add_photos(name->second, one, 0);
    }
    return c.library.add_photos(name->second, r.files, r.dropped_files);
  }
  if (p == "/api/people/remove") {
    if (!post) return wrong_method();
    Fields f = json_fields(r, {"name"});
    return f.error ? *f.error : c.library.remove_person(f.values["name"]);
  }
  if (p == "/api/people/rename") {
    if (!post) return wrong_method();
    Fields f = json_fields(r, {"name", "new_name"});
    return f.error ? *f.error : c.library.rename_person(f.values["name"], f.values["new_name"]);
  }
  if (const auto id = id_between(p, "/api/templates/", "/remove"))
    return post ? c.library.remove_template(*id) : wrong_method();
  if (const auto id = id_between(p, "/api/templates/", "/thumbnail.jpg"))
    return get ? c.library.template_thumbnail(*id) : wrong_method();
  if (p == "/api/unknowns") return get ? c.library.unknowns() : wrong_method();
  if (const auto id = id_between(p, "/api/unknowns/faces/", ".jpg"))
    return get ? c.library.unknown_face_picture(*id) : wrong_method();
  if (p == "/api/unknowns/name" || p == "/api/unknowns/merge") {
    if (!post) return wrong_method();
    const bool merge = p == "/api/unknowns/merge";
    Fields f = json_fields(r, {"key", merge ? "person" : "name"});
    return f.error ? *f.error : c.library.name_cluster(f.values["key"], f.values[merge ? "person" : "name"], merge);
  }
  if (p == "/api/unknowns/forget") {
    if (!post) return wrong_method();
    Fields f = json_fields(r, {"key"});
    return f.error ? *f.error : c.library.forget_cluster(f.values["key"]);
  }
  if (p == "/api/events") return get ? events(c, r) : wrong_method();
  if (p == "/api/cameras") return get ? ApiReply{200, "application/json", c.live.cameras_json()} : wrong_method();
  if (p == "/api/recognize") {
    if (!post) return wrong_method();
    if (r.body.empty()) return error_reply(400, "POST the image as the request body");
    return c.library.recognize(r.body);
  }
  return error_reply(404, "no such API route: " + gallery::printable_source(p.substr(0, 200)));
}

}  // namespace taconite::app

// What an API handler answers (status, type, body), and the JSON text builder the handlers share:
// json-glib's builder written out by the project's one JSON writer (json/json_write.hpp), so
// every name that reaches the page is valid, escaped JSON whatever bytes it held.
#pragma once

#include <json-glib/json-glib.h>

#include <cstdint>
#include <string>
#include <vector>

namespace taconite::app {

struct ApiReply {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
};

// {"error": message} with `status`.
ApiReply error_reply(unsigned status, const std::string& message);
// Raw bytes (a JPEG) with their type.
ApiReply bytes_reply(std::vector<unsigned char> bytes, const std::string& content_type);

// A JSON document built member by member: begin_object/array, name, values, end, then text().
class JsonText {
 public:
  JsonText();
  JsonText(const JsonText&) = delete;
  JsonText& operator=(const JsonText&) = delete;
  ~JsonText();

  JsonText& object() { json_builder_begin_object(b_); return *this; }
  JsonText& end_object() { json_builder_end_object(b_); return *this; }
  JsonText& array() { json_builder_begin_array(b_); return *this; }
  JsonText& end_array() { json_builder_end_array(b_); return *this; }
  JsonText& name(const char* member) { json_builder_set_member_name(b_, member); return *this; }
  JsonText& value(const std::string& s) { json_builder_add_string_value(b_, s.c_str()); return *this; }
  JsonText& value(const char* s) { json_builder_add_string_value(b_, s); return *this; }
  JsonText& value(std::int64_t v) { json_builder_add_int_value(b_, v); return *this; }
  JsonText& value(std::size_t v) { json_builder_add_int_value(b_, static_cast<gint64>(v)); return *this; }
  JsonText& value(double v) { json_builder_add_double_value(b_, v); return *this; }
  JsonText& value(bool v) { json_builder_add_boolean_value(b_, v); return *this; }
  JsonText& null() { json_builder_add_null_value(b_); return *this; }
  // A JSON value given as text already written by json_write (the node is parsed and inserted).
  JsonText& raw(JsonNode* node) { json_builder_add_value(b_, node); return *this; }

  std::string text();

 private:
  JsonBuilder* b_;
};

}  // namespace taconite::app

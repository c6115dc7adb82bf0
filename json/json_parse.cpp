#include "json_parse.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

#include "json_strings.hpp"

namespace taconite::json {

namespace {

// json-glib reads an integer beyond 64 bits as -1, silently: such a token is refused instead.
std::string integer_problem(std::string_view token) {
  if (token.find_first_of(".eE") != std::string_view::npos) return {};  // a double: json-glib reads it right
  std::int64_t value = 0;
  if (std::from_chars(token.data(), token.data() + token.size(), value).ec != std::errc::result_out_of_range)
    return {};
  const std::string shown = token.size() > 40 ? std::string(token.substr(0, 40)) + "..." : std::string(token);
  return "the integer " + shown + " is beyond 64 bits (write it as a string, or as a number with an exponent)";
}

// What keeps `text` from the parse: too deep, an integer json-glib misreads, or a token json-glib
// reads but strict JSON has not.
std::string shape_problem(std::string_view text) {
  constexpr std::string_view kNumberChars = "0123456789+-.eE";
  int depth = 0, deepest = 0;
  StringTracker strings;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (strings.inside(c)) continue;
    if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t end = i;
      while (end < text.size() && kNumberChars.find(text[end]) != std::string_view::npos) ++end;
      if (std::string problem = integer_problem(text.substr(i, end - i)); !problem.empty()) return problem;
      i = end - 1;
    } else if (c == '\'' || c == '/') {
      return std::string("a ") + c + " outside a string (single quotes and comments are not JSON)";
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      depth = std::max(0, depth - 1);  // a stray closer must not let later openers go uncounted
    }
  }
  if (deepest > kMaxJsonDepth)
    return "nested " + std::to_string(deepest) + " levels deep, at most " + std::to_string(kMaxJsonDepth);
  return {};
}

}  // namespace

Result<JsonNodePtr> parse_json(std::string_view text) {
  if (!g_utf8_validate(text.data(), static_cast<gssize>(text.size()), nullptr))
    return Error{ErrorKind::Input, "not valid UTF-8"};
  if (const std::string problem = shape_problem(text); !problem.empty())
    return Error{ErrorKind::Input, "not accepted as JSON: " + problem};
  const std::string owned(text);  // json-glib wants a NUL-terminated string
  GError* error = nullptr;
  JsonNode* node = json_from_string(owned.c_str(), &error);
  if (!node) {
    std::string why = error ? error->message : "empty";
    if (error) g_error_free(error);
    return Error{ErrorKind::Input, "not JSON (" + why + ")"};
  }
  return JsonNodePtr(node);
}

std::string json_kind(JsonNode* node) {
  switch (json_node_get_node_type(node)) {
    case JSON_NODE_OBJECT: return "an object";
    case JSON_NODE_ARRAY: return "an array";
    case JSON_NODE_NULL: return "null";
    case JSON_NODE_VALUE: break;
  }
  const GType type = json_node_get_value_type(node);
  return type == G_TYPE_STRING ? "a string" : type == G_TYPE_BOOLEAN ? "a boolean" : "a number";
}

bool json_numbers_finite(JsonNode* node) {
  switch (json_node_get_node_type(node)) {
    case JSON_NODE_OBJECT: {
      JsonObjectIter iter;
      json_object_iter_init(&iter, json_node_get_object(node));
      JsonNode* member = nullptr;
      while (json_object_iter_next(&iter, nullptr, &member))
        if (!json_numbers_finite(member)) return false;
      return true;
    }
    case JSON_NODE_ARRAY: {
      JsonArray* array = json_node_get_array(node);
      for (guint i = 0; i < json_array_get_length(array); ++i)
        if (!json_numbers_finite(json_array_get_element(array, i))) return false;
      return true;
    }
    case JSON_NODE_VALUE:
      return json_node_get_value_type(node) != G_TYPE_DOUBLE || std::isfinite(json_node_get_double(node));
    case JSON_NODE_NULL: return true;
  }
  return true;
}

}  // namespace taconite::json

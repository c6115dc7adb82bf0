#include "onnx/embedder_description.hpp"

#include <json-glib/json-glib.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "bundle/regular_file.hpp"
#include "common/failure.hpp"

namespace taconite::onnx {

namespace {

struct ObjectUnref {
  void operator()(gpointer object) const { g_object_unref(object); }
};

// Reads the members of one JSON object; every error names the field by its dotted path.
class Fields {
 public:
  Fields(JsonObject* object, std::string prefix, const std::string& origin)
      : object_(object), prefix_(std::move(prefix)), origin_(origin) {}

  [[noreturn]] void fail_field(const std::string& member, const std::string& problem) const {
    fail(ErrorKind::Bundle, origin_ + ": " + prefix_ + member + ": " + problem);
  }

  JsonNode* required(const char* member) const {
    JsonNode* node = json_object_get_member(object_, member);
    if (node == nullptr) fail_field(member, "missing");
    return node;
  }

  std::string string(const char* member) const {
    JsonNode* node = required(member);
    if (JSON_NODE_HOLDS_VALUE(node) == FALSE || json_node_get_value_type(node) != G_TYPE_STRING)
      fail_field(member, "expected a string, got " + type_of(node));
    std::string value = json_node_get_string(node);
    if (value.empty() || value.size() > kMaxNameLength)
      fail_field(member, "expected 1.." + std::to_string(kMaxNameLength) + " characters, got " +
                             std::to_string(value.size()));
    return value;
  }

  int integer(const char* member, int low, int high) const {
    JsonNode* node = required(member);
    if (JSON_NODE_HOLDS_VALUE(node) == FALSE || json_node_get_value_type(node) != G_TYPE_INT64)
      fail_field(member, "expected an integer, got " + type_of(node));
    const gint64 value = json_node_get_int(node);
    if (value < low || value > high)
      fail_field(member, "expected " + std::to_string(low) + ".." + std::to_string(high) + ", got " +
                             std::to_string(value));
    return static_cast<int>(value);
  }

  std::optional<double> optional_number(const char* member) const {
    if (!json_object_has_member(object_, member)) return std::nullopt;
    return number_of(json_object_get_member(object_, member), member);
  }

  std::array<float, 3> three_numbers(const char* member) const {
    JsonNode* node = required(member);
    if (!JSON_NODE_HOLDS_ARRAY(node)) fail_field(member, "expected an array of 3 numbers, got " + type_of(node));
    JsonArray* array = json_node_get_array(node);
    if (json_array_get_length(array) != 3)
      fail_field(member, "expected 3 numbers (one per colour plane), got " +
                             std::to_string(json_array_get_length(array)));
    std::array<float, 3> values{};
    for (guint i = 0; i < 3; ++i) {
      const std::string element = std::string(member) + "[" + std::to_string(i) + "]";
      const double value = number_of(json_array_get_element(array, i), element);
      if (std::abs(value) > 1e6) fail_field(element, "expected a value within +-1e6, got " + std::to_string(value));
      values[i] = static_cast<float>(value);
    }
    return values;
  }

  Fields object(const char* member) const {
    JsonNode* node = required(member);
    if (!JSON_NODE_HOLDS_OBJECT(node)) fail_field(member, "expected an object, got " + type_of(node));
    return Fields(json_node_get_object(node), prefix_ + member + ".", origin_);
  }

 private:
  static std::string type_of(JsonNode* node) {
    if (JSON_NODE_HOLDS_OBJECT(node)) return "an object";
    if (JSON_NODE_HOLDS_ARRAY(node)) return "an array";
    if (JSON_NODE_HOLDS_NULL(node)) return "null";
    switch (json_node_get_value_type(node)) {
      case G_TYPE_STRING: return "a string";
      case G_TYPE_BOOLEAN: return "a boolean";
      case G_TYPE_INT64: return "an integer";
      case G_TYPE_DOUBLE: return "a number";
      default: return "a value";
    }
  }

  double number_of(JsonNode* node, const std::string& member) const {
    const bool number = JSON_NODE_HOLDS_VALUE(node) && (json_node_get_value_type(node) == G_TYPE_INT64 ||
                                                        json_node_get_value_type(node) == G_TYPE_DOUBLE);
    if (!number) fail_field(member, "expected a number, got " + type_of(node));
    const double value = json_node_get_value_type(node) == G_TYPE_INT64 ? static_cast<double>(json_node_get_int(node))
                                                                        : json_node_get_double(node);
    if (!std::isfinite(value)) fail_field(member, "expected a finite number");
    return value;
  }

  JsonObject* object_;
  std::string prefix_;
  const std::string& origin_;
};

PlaneOrder channel_order(const Fields& input) {
  const std::string order = input.string("channel_order");
  if (order == "RGB") return PlaneOrder::Rgb;
  if (order == "BGR") return PlaneOrder::Bgr;
  input.fail_field("channel_order", "expected \"RGB\" or \"BGR\", got \"" + order + "\"");
}

// json-glib's parser recurses once per nesting level: a description of a million '[' would
// overflow the stack. A description needs two levels; deeper than this is refused before parsing.
constexpr int kMaxDescriptionDepth = 16;

// The deepest nesting of arrays and objects in `text`, brackets inside strings not counted; stops
// counting once past kMaxDescriptionDepth.
int nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if ((deepest = std::max(deepest, ++depth)) > kMaxDescriptionDepth) break;
    } else if (c == ']' || c == '}') {
      depth = std::max(0, depth - 1);
    }
  }
  return deepest;
}

}  // namespace

EmbedderDescription parse_embedder_description(std::string_view text, const std::string& origin) {
  if (nesting_depth(text) > kMaxDescriptionDepth)
    fail(ErrorKind::Bundle, origin + ": nested more than " + std::to_string(kMaxDescriptionDepth) +
                                " levels deep (a taconite-embedder/1 description needs two)");
  std::unique_ptr<JsonParser, ObjectUnref> parser(json_parser_new());
  GError* error = nullptr;
  if (!json_parser_load_from_data(parser.get(), text.data(), static_cast<gssize>(text.size()), &error)) {
    const std::string message = error ? error->message : "unknown error";
    g_clear_error(&error);
    fail(ErrorKind::Bundle, origin + ": not valid JSON: " + message);
  }
  JsonNode* root = json_parser_get_root(parser.get());
  if (root == nullptr || !JSON_NODE_HOLDS_OBJECT(root))
    fail(ErrorKind::Bundle, origin + ": expected a JSON object (a taconite-embedder/1 description)");
  const Fields top(json_node_get_object(root), "", origin);

  if (const std::string format = top.string("format"); format != kDescriptionFormat)
    top.fail_field("format", "expected \"" + std::string(kDescriptionFormat) + "\", got \"" + format + "\"");
  EmbedderDescription d;
  d.name = top.string("name");

  const Fields input = top.object("input");
  d.input_name = input.string("name");
  d.preprocessing.width = input.integer("width", kMinInputSide, kMaxInputSide);
  d.preprocessing.height = input.integer("height", kMinInputSide, kMaxInputSide);
  d.preprocessing.channel_order = channel_order(input);
  d.preprocessing.mean = input.three_numbers("mean");
  d.preprocessing.std_dev = input.three_numbers("std");
  for (int c = 0; c < 3; ++c)
    if (!(d.preprocessing.std_dev[c] > 0.0f))
      input.fail_field("std[" + std::to_string(c) + "]",
                       "expected a positive number (the value is divided by it), got " +
                           std::to_string(d.preprocessing.std_dev[c]));

  const Fields output = top.object("output");
  d.output_name = output.string("name");
  d.dim = output.integer("dim", 1, kMaxEmbedDim);

  d.threshold = top.optional_number("threshold");
  if (d.threshold && (*d.threshold < -1.0 || *d.threshold > 1.0))
    top.fail_field("threshold", "expected a cosine similarity in -1..1, got " + std::to_string(*d.threshold));
  return d;
}

EmbedderDescription read_embedder_description(const std::filesystem::path& path) {
  const bundle::RegularFile file = bundle::RegularFile::open(path);
  if (file.size() > kMaxDescriptionBytes)
    fail(ErrorKind::Bundle, path.string() + ": " + std::to_string(file.size()) +
                                " bytes, more than a model description may hold (" +
                                std::to_string(kMaxDescriptionBytes) + ")");
  std::string text(static_cast<std::size_t>(file.size()), '\0');
  file.read_all(text.data());
  return parse_embedder_description(text, path.string());
}

}  // namespace taconite::onnx

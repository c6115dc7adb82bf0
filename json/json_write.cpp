#include "json_write.hpp"

#include <charconv>
#include <cmath>
#include <string_view>
#include <vector>

#include "utf8_repair.hpp"

namespace taconite::json {

namespace {

// A member name or an array index: one step of the path a repair is reported at.
struct PathStep {
  const char* member = nullptr;  // null: an array element
  guint index = 0;
};

// A repaired member name in a path is cut to this many bytes (it is there to be recognised).
constexpr std::size_t kMaxPathNameBytes = 64;

class Writer {
 public:
  explicit Writer(Repairs* repairs) : repairs_(repairs) {}

  std::string take() { return std::move(out_); }

  void value(JsonNode* node) {
    if (!node) {
      out_ += "null";
      return;
    }
    switch (json_node_get_node_type(node)) {
      case JSON_NODE_OBJECT: object(json_node_get_object(node)); return;
      case JSON_NODE_ARRAY: array(json_node_get_array(node)); return;
      case JSON_NODE_NULL: out_ += "null"; return;
      case JSON_NODE_VALUE: break;
    }
    const GType type = json_node_get_value_type(node);
    if (type == G_TYPE_INT64)
      integer(json_node_get_int(node));
    else if (type == G_TYPE_DOUBLE)
      number(json_node_get_double(node));
    else if (type == G_TYPE_BOOLEAN)
      out_ += json_node_get_boolean(node) ? "true" : "false";
    else if (type == G_TYPE_STRING)
      string(json_node_get_string(node));
    else
      out_ += "null";  // json-glib makes no other value type; nothing else is JSON
  }

 private:
  void object(JsonObject* object) {
    out_ += '{';
    JsonObjectIter iter;
    json_object_iter_init_ordered(&iter, object);  // the order the members were added in
    const char* name = nullptr;
    JsonNode* member = nullptr;
    bool first = true;
    while (json_object_iter_next_ordered(&iter, &name, &member)) {
      if (!first) out_ += ',';
      first = false;
      path_.push_back({name, 0});
      string(name);
      out_ += ':';
      value(member);
      path_.pop_back();
    }
    out_ += '}';
  }

  void array(JsonArray* array) {
    out_ += '[';
    const guint length = json_array_get_length(array);
    for (guint i = 0; i < length; ++i) {
      if (i) out_ += ',';
      path_.push_back({nullptr, i});
      value(json_array_get_element(array, i));
      path_.pop_back();
    }
    out_ += ']';
  }

  void integer(gint64 value) {
    char text[24];
    const std::to_chars_result end = std::to_chars(text, text + sizeof text, value);
    out_.append(text, end.ptr);
  }

  void number(double value) {
    if (!std::isfinite(value)) {  // JSON has no NaN or infinity
      out_ += "null";
      return;
    }
    char text[32];  // the longest shortest form, e.g. -2.2250738585072014e-308, has 24 characters
    const std::to_chars_result end = std::to_chars(text, text + sizeof text, value);
    const std::string_view shortest(text, static_cast<std::size_t>(end.ptr - text));
    out_ += shortest;
    if (shortest.find_first_of(".e") == std::string_view::npos) out_ += ".0";
  }

  void string(const char* text) {
    const std::string_view s = text ? text : "";
    out_ += '"';
    bool repaired = false;
    for (std::size_t at = 0; at < s.size();) {
      const unsigned char c = static_cast<unsigned char>(s[at]);
      if (c >= 0x80) {
        const Utf8Sequence sequence = utf8_sequence_at(s, at);
        if (sequence.well_formed) {
          out_.append(s.substr(at, sequence.length));
        } else {
          out_ += kReplacementCharacter;
          repaired = true;
        }
        at += sequence.length;
        continue;
      }
      escaped(static_cast<char>(c));
      ++at;
    }
    out_ += '"';
    if (repaired) note_repair();
  }

  void escaped(char c) {
    switch (c) {
      case '"': out_ += "\\\""; return;
      case '\\': out_ += "\\\\"; return;
      case '\b': out_ += "\\b"; return;
      case '\f': out_ += "\\f"; return;
      case '\n': out_ += "\\n"; return;
      case '\r': out_ += "\\r"; return;
      case '\t': out_ += "\\t"; return;
      default: break;
    }
    if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out_ += "\\u00";
      out_ += kHex[(c >> 4) & 0xF];
      out_ += kHex[c & 0xF];
      return;
    }
    out_ += c;
  }

  void note_repair() {
    if (!repairs_) return;
    if (repairs_->strings++ == 0) repairs_->first = path_text();
  }

  // The path to the string being written, e.g. `faces[0].label`; made only for the first repair.
  std::string path_text() const {
    std::string path;
    for (const PathStep& step : path_) {
      if (!step.member) {
        path += '[' + std::to_string(step.index) + ']';
        continue;
      }
      std::string name = repaired_utf8(step.member);
      if (name.size() > kMaxPathNameBytes) {
        std::size_t cut = kMaxPathNameBytes;
        while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // a character's start
        name.resize(cut);
        name += "...";
      }
      if (!path.empty()) path += '.';
      path += name;
    }
    return path;
  }

  Repairs* repairs_;
  std::string out_;
  std::vector<PathStep> path_;
};

}  // namespace

std::string write_json(JsonNode* node, Repairs* repairs) {
  Writer writer(repairs);
  writer.value(node);
  return writer.take();
}

}  // namespace taconite::json

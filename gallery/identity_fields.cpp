#include "identity_fields.hpp"

#include <glib.h>

#include "json_text.hpp"

namespace taconite::gallery {

namespace {

bool breaks_a_line(gunichar c) {
  const GUnicodeType type = g_unichar_type(c);
  return type == G_UNICODE_CONTROL || type == G_UNICODE_LINE_SEPARATOR || type == G_UNICODE_PARAGRAPH_SEPARATOR;
}

std::string code_point(gunichar c) {
  char text[16];
  g_snprintf(text, sizeof text, "U+%04X", c);
  return text;
}

}  // namespace

Status check_identity_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes)
    return Error{ErrorKind::Input, "identity name of " + std::to_string(name.size()) + " bytes, must be 1.." +
                                       std::to_string(kMaxNameBytes)};
  const char* end = nullptr;
  if (!g_utf8_validate(name.data(), static_cast<gssize>(name.size()), &end))
    return Error{ErrorKind::Input, "identity name is not valid UTF-8 (byte " + std::to_string(end - name.data()) + ")"};
  bool blank = true;
  long position = 0;
  for (const char* p = name.data(); p < name.data() + name.size(); p = g_utf8_next_char(p), ++position) {
    const gunichar c = g_utf8_get_char(p);
    if (breaks_a_line(c))
      return Error{ErrorKind::Input, "identity name holds a control character (" + code_point(c) + " at character " +
                                         std::to_string(position) + ")"};
    blank = blank && g_unichar_isspace(c);
  }
  if (blank) return Error{ErrorKind::Input, "identity name is blank"};
  return Ok{};
}

Result<std::string> canonical_metadata(std::string_view text) {
  if (text.empty()) return std::string("{}");
  if (text.size() > kMaxMetadataBytes)
    return Error{ErrorKind::Input, "metadata of " + std::to_string(text.size()) + " bytes, at most " +
                                       std::to_string(kMaxMetadataBytes)};
  Result<JsonNodePtr> node = parse_json(text);
  if (!node) return Error{ErrorKind::Input, "metadata must be a JSON object: " + node.error().message};
  if (!JSON_NODE_HOLDS_OBJECT(node.value().get()))
    return Error{ErrorKind::Input, "metadata must be a JSON object ({...}), not " + json_kind(node.value().get())};
  if (!json_numbers_finite(node.value().get()))
    return Error{ErrorKind::Input, "metadata holds a number too large for a double"};
  gchar* compact = json_to_string(node.value().get(), FALSE);
  std::string out = compact;
  g_free(compact);
  return out;
}

std::string printable_source(std::string_view source) {
  gchar* valid = g_utf8_make_valid(source.data(), static_cast<gssize>(source.size()));
  std::string out;
  for (const char* p = valid; *p; p = g_utf8_next_char(p)) {
    const char* next = g_utf8_next_char(p);
    const gunichar c = g_utf8_get_char(p);
    const std::string_view piece = breaks_a_line(c) ? std::string_view("\xEF\xBF\xBD") : std::string_view(p, next - p);
    if (out.size() + piece.size() > kMaxSourceBytes) break;
    out += piece;
  }
  g_free(valid);
  return out;
}

}  // namespace taconite::gallery

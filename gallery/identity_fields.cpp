#include "identity_fields.hpp"

#include <glib.h>

#include <cmath>

#include "json_parse.hpp"
#include "json_strings.hpp"
#include "json_write.hpp"
#include "utf8_repair.hpp"

namespace taconite::gallery {

namespace {

// An embedding whose squared norm is this close to 1 is already unit length: it is stored as
// given, so a template exported and imported again keeps its exact bits (and is seen as a duplicate).
constexpr double kUnitTolerance = 1e-6;

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

Status check_name_like(std::string_view what, std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes)
    return Error{ErrorKind::Input, std::string(what) + " of " + std::to_string(name.size()) + " bytes, must be 1.." +
                                       std::to_string(kMaxNameBytes)};
  const char* end = nullptr;
  if (!g_utf8_validate(name.data(), static_cast<gssize>(name.size()), &end))
    return Error{ErrorKind::Input, std::string(what) + " is not valid UTF-8 (byte " + std::to_string(end - name.data()) + ")"};
  bool blank = true;
  long position = 0;
  for (const char* p = name.data(); p < name.data() + name.size(); p = g_utf8_next_char(p), ++position) {
    const gunichar c = g_utf8_get_char(p);
    if (breaks_a_line(c))
      return Error{ErrorKind::Input, std::string(what) + " holds a control character (" + code_point(c) + " at character " +
                                         std::to_string(position) + ")"};
    blank = blank && g_unichar_isspace(c);
  }
  if (blank) return Error{ErrorKind::Input, std::string(what) + " is blank"};
  return Ok{};
}

Status check_identity_name(std::string_view name) { return check_name_like("identity name", name); }

Result<std::string> canonical_metadata(std::string_view text) {
  if (text.empty()) return std::string("{}");
  if (text.size() > kMaxMetadataBytes)
    return Error{ErrorKind::Input, "metadata of " + std::to_string(text.size()) + " bytes, at most " +
                                       std::to_string(kMaxMetadataBytes)};
  Result<json::JsonNodePtr> node = json::parse_json(text);
  if (!node) return Error{ErrorKind::Input, "metadata must be a JSON object: " + node.error().message};
  if (!JSON_NODE_HOLDS_OBJECT(node.value().get()))
    return Error{ErrorKind::Input, "metadata must be a JSON object ({...}), not " + json::json_kind(node.value().get())};
  if (!json::json_numbers_finite(node.value().get()))
    return Error{ErrorKind::Input, "metadata holds a number too large for a double"};
  return json::write_json(node.value().get());
}

namespace {

// Whether `token` is a number with an exponent followed by ".0" (`1e+20.0`, `-2.5E-7.0`): json-glib
// 1.6 appended ".0" to every double it printed without a '.', so galleries it wrote hold these.
bool glib_exponent_form(std::string_view token) {
  if (token.size() < 5 || !token.ends_with(".0")) return false;
  const std::string_view number = token.substr(0, token.size() - 2);
  const std::size_t e = number.find_first_of("eE");
  if (e == std::string_view::npos || e + 1 >= number.size()) return false;
  const std::size_t digits = e + 1 + (number[e + 1] == '+' || number[e + 1] == '-');
  return digits < number.size() && number.find_first_not_of("0123456789", digits) == std::string_view::npos;
}

// `text` with the ".0" of every such number outside a string dropped; `changed` says whether any was.
std::string without_glib_exponent_suffix(std::string_view text, bool* changed) {
  constexpr std::string_view kNumberChars = "0123456789+-.eE";
  std::string out;
  out.reserve(text.size());
  json::StringTracker strings;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (strings.inside(c) || (c != '-' && (c < '0' || c > '9'))) {
      out += c;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && kNumberChars.find(text[end]) != std::string_view::npos) ++end;
    const std::string_view token = text.substr(i, end - i);
    const bool suffixed = glib_exponent_form(token);
    out += suffixed ? token.substr(0, token.size() - 2) : token;
    *changed = *changed || suffixed;
    i = end - 1;
  }
  return out;
}

}  // namespace

StoredMetadata read_stored_metadata(std::string_view text) {
  StoredMetadata read;
  if (Result<json::JsonNodePtr> node = json::parse_json(text); node && JSON_NODE_HOLDS_OBJECT(node.value().get())) {
    if (!json::json_numbers_finite(node.value().get())) read.problem = "holds a number too large for a double (written as null)";
    read.object = std::move(node.value());
    return read;
  }
  std::size_t replaced = 0;
  bool renumbered = false;
  const std::string mended = without_glib_exponent_suffix(json::repaired_utf8(text, &replaced), &renumbered);
  Result<json::JsonNodePtr> node = json::parse_json(mended);
  if (node && JSON_NODE_HOLDS_OBJECT(node.value().get()) && (replaced || renumbered)) {
    read.problem = std::string("is not valid JSON (") +
                   (renumbered ? "numbers as json-glib 1.6 wrote them, e.g. 1e+20.0" : "") +
                   (renumbered && replaced ? "; " : "") + (replaced ? "bytes that are not UTF-8" : "") +
                   "): written mended";
    if (!json::json_numbers_finite(node.value().get())) read.problem += ", a number too large for a double as null";
    read.object = std::move(node.value());
    return read;
  }
  read.problem = "is not a JSON object (" + (node ? "it is " + json::json_kind(node.value().get()) : node.error().message) +
                 "): written as a string";
  read.text = json::repaired_utf8(text);
  return read;
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

Result<StoredEmbedding> unit_embedding(std::span<const float> embedding, double norm, int dim,
                                       const std::string& what) {
  if (embedding.size() != static_cast<std::size_t>(dim))
    return Error{ErrorKind::Input, what + " has " + std::to_string(embedding.size()) + " values, the gallery holds " +
                                       std::to_string(dim)};
  double sum = 0.0;
  for (std::size_t i = 0; i < embedding.size(); ++i) {
    if (!std::isfinite(embedding[i]))
      return Error{ErrorKind::Input,
                   what + ": value " + std::to_string(i) + " is not finite (" + std::to_string(embedding[i]) + ")"};
    sum += static_cast<double>(embedding[i]) * embedding[i];
  }
  if (sum <= 0.0) return Error{ErrorKind::Input, what + " is all zeros"};
  if (norm < 0.0 || !std::isfinite(norm))
    return Error{ErrorKind::Input, what + ": norm " + std::to_string(norm) + " is not a finite positive number"};
  const double length = std::sqrt(sum);
  StoredEmbedding stored{std::vector<float>(embedding.begin(), embedding.end()), norm > 0.0 ? norm : length};
  if (std::abs(sum - 1.0) > kUnitTolerance)
    for (std::size_t i = 0; i < stored.unit.size(); ++i) stored.unit[i] = static_cast<float>(embedding[i] / length);
  return stored;
}

Status check_stored_embedding(const void* bytes, std::size_t length, int dim, std::string_view gallery,
                              std::string_view row, std::int64_t id) {
  const std::size_t expected = static_cast<std::size_t>(dim) * sizeof(float);
  if (bytes && length == expected) return Ok{};
  return Error{ErrorKind::Io, std::string(gallery) + ": " + std::string(row) + " " + std::to_string(id) + " holds " +
                                  std::to_string(length) + " bytes, expected " + std::to_string(expected) +
                                  " (corrupt gallery)"};
}

}  // namespace taconite::gallery

// The project's one writer of JSON text (frame documents, track events, MQTT payloads, gallery
// metadata, export lines, `unknowns --json`). json-glib's generator is not used: version 1.6 prints a
// double without a '.' by appending ".0", so 1e17 became `1e+17.0`, which no JSON parser accepts.
//
// Numbers: integers (G_TYPE_INT64) as integers; doubles in the shortest text that reads back as the
// same double (std::to_chars), with ".0" added when that text has neither '.' nor an exponent, so a
// double stays a double for typed readers (1.0, -0.0, 1e+17, 5e-324); NaN and infinity as null.
// Strings (values and member names): RFC 8259 escapes ('"', '\\', controls below U+0020), every
// ill-formed UTF-8 sequence replaced by U+FFFD (utf8_repair.hpp). The output is always valid JSON
// in valid UTF-8, on one line.
#pragma once

#include <json-glib/json-glib.h>

#include <cstdint>
#include <string>

namespace taconite::json {

// What writing had to mend. Give the same Repairs to many writes to sum them.
struct Repairs {
  std::uint64_t strings = 0;  // strings (values or member names) in which bytes that are not UTF-8 became U+FFFD
  std::string first;          // where the first of them was, e.g. `faces[0].label` (empty: the root itself)
};

// `node` as compact JSON text. A null node writes `null`. Recursive: the trees written are the
// project's own or parsed by parse_json (nested at most kMaxJsonDepth).
std::string write_json(JsonNode* node, Repairs* repairs = nullptr);

}  // namespace taconite::json

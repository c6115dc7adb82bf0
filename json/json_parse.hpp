// JSON text from untrusted input (import lines, identity metadata) parsed with json-glib safely.
// json-glib's parser recurses once per nesting level, so a line of a million '[' overflows the
// stack; it also reads 1e999 as infinity, which JSON cannot hold. The depth is therefore bounded
// before parsing, and numbers can be checked for finiteness after. (Text is written back with
// json_write.hpp, never with json-glib's generator.)
#pragma once

#include <json-glib/json-glib.h>

#include <memory>
#include <string>
#include <string_view>

#include "taconite/error.hpp"

namespace taconite::json {

// Arrays and objects nested deeper than this are refused (metadata needs a handful of levels).
inline constexpr int kMaxJsonDepth = 32;

struct JsonNodeDeleter {
  void operator()(JsonNode* node) const { json_node_unref(node); }
};
using JsonNodePtr = std::unique_ptr<JsonNode, JsonNodeDeleter>;

// Parses `text`, which must be valid UTF-8 and nested at most kMaxJsonDepth deep. json-glib also
// takes single-quoted strings and /* comments */, which would hide brackets from the depth count:
// a quote or slash outside a double-quoted string is refused (strict JSON has neither), and so is
// an integer beyond 64 bits, which json-glib would read as -1. The error
// says what is wrong, without naming a file (the caller knows which file and line it is).
Result<JsonNodePtr> parse_json(std::string_view text);

// What kind of JSON `node` is, for messages: "an object", "an array", "a string", "a number",
// "a boolean" or "null".
std::string json_kind(JsonNode* node);

// False when a number in `node` (at any depth) is infinite or NaN.
bool json_numbers_finite(JsonNode* node);

}  // namespace taconite::json

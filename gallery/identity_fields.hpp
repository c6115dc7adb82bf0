// What a gallery stores about an identity, checked the same way for every writer (the CLI's
// enroll and import, tests, any program on the library). Names become `taconite-identity` labels,
// JSON documents and `taconite-gallery list` lines: they must be valid UTF-8 on one line.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gallery_store.hpp"
#include "json_parse.hpp"

namespace taconite::gallery {

// A template's source text is kept to this many bytes (it is a note: a file path, "import").
inline constexpr std::size_t kMaxSourceBytes = 1024;

// Input error when `name` is empty, only white space, longer than kMaxNameBytes, not valid UTF-8,
// or holds a control character (U+0000..U+001F, U+007F..U+009F) or a line/paragraph separator.
Status check_identity_name(std::string_view name);
// The same checks for another text that is shown like a name (a camera's stream name), with
// `what` naming it in the error.
Status check_name_like(std::string_view what, std::string_view name);

// The metadata as stored: "{}" for empty text; a JSON object (at most kMaxMetadataBytes, no
// non-finite number) re-written compactly on one line (json_write.hpp); anything else is an input error.
Result<std::string> canonical_metadata(std::string_view text);

// Stored metadata read back for a reader that must write it out (export). Galleries written before
// it was checked, by json-glib 1.6 (which stored 1e20 as `1e+20.0`) or by sqlite3 may hold text that
// is not JSON. Such text is mended when it can be: bytes that are not UTF-8 become U+FFFD and
// json-glib's ".0" after an exponent is dropped; `object` is then the object and `problem` says what
// was mended. Text that is still no JSON object leaves `object` null, `text` the stored text (UTF-8
// mended) and `problem` why. `problem` is empty for valid metadata.
struct StoredMetadata {
  json::JsonNodePtr object;
  std::string text;
  std::string problem;
};
StoredMetadata read_stored_metadata(std::string_view text);

// The source as stored: invalid UTF-8 and control characters replaced by U+FFFD, cut (at a
// character boundary) to kMaxSourceBytes. A source is informational, so it is mended, not refused.
std::string printable_source(std::string_view source);

// An embedding as stored: at unit length, with the norm to keep (the given one, or the
// embedding's length when none was given).
struct StoredEmbedding {
  std::vector<float> unit;
  double norm = 0.0;
};

// Input error, starting with `what` (the gallery and whose embedding), unless `embedding` has
// `dim` finite values, not all zero, and `norm` is 0 or finite and positive.
Result<StoredEmbedding> unit_embedding(std::span<const float> embedding, double norm, int dim,
                                       const std::string& what);

// What every reader (SQLite and PostgreSQL, templates and unknown faces) checks of an embedding it
// reads back: `length` bytes at `bytes` must be `dim` float32 values. Io error otherwise:
// "<gallery>: <row> <id> holds N bytes, expected M (corrupt gallery)". (The message is made only
// then: this runs once per template of a load.)
Status check_stored_embedding(const void* bytes, std::size_t length, int dim, std::string_view gallery,
                              std::string_view row, std::int64_t id);

}  // namespace taconite::gallery

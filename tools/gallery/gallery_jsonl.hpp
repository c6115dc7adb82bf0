// Export and import of a gallery as JSON lines: a header line naming the model, then one line per
// template (or per identity without templates):
//   {"taconite_gallery":1,"embedding_dim":512,"model":"IR-18","model_fingerprint":"<sha256>"}
//   {"name":"astronaut","metadata":{},"embedding":[512 floats],"norm":21.7,"source":"a.png","created_unix":1764553200}
//
// Import is one transaction (all lines or none; a gallery it created is removed again on error),
// checks the type of every member and names the line of any problem, and skips templates the
// identity already has (the store's rule), so importing a file twice adds nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>

#include "gallery_store.hpp"

namespace taconite::gallery_cli {

// Called with each problem of what the gallery holds that export mends rather than refuses (text
// written before the checks: metadata that is no valid JSON, bytes that are not UTF-8), naming the
// identity; the line is still written, as valid JSON (gallery::read_stored_metadata, json_write.hpp).
using ExportWarning = std::function<void(const std::string&)>;

gallery::Status export_jsonl(const gallery::GalleryStore& store, std::ostream& out, const ExportWarning& warn);

// The "taconite_gallery" member of the header line: the version of this JSON lines format (not the
// gallery file's schema version).
inline constexpr int kExportFormatVersion = 1;

struct ImportSummary {
  std::int64_t identities = 0;  // identities written to (new or existing)
  std::int64_t templates = 0;   // templates added
  std::int64_t duplicates = 0;  // templates the identity already had (not added again)
  bool created = false;         // the gallery file was created from the header
};

// Reads the regular file `file` into the gallery at `gallery`, creating it from the header when it
// does not exist; refuses a header of another model or embedding size. Errors name file:line.
Result<ImportSummary> import_jsonl(const std::filesystem::path& gallery, const std::filesystem::path& file);

// A line longer than this is refused as soon as it is read (a 512-float template line is ~10 KiB).
inline constexpr std::size_t kMaxLineBytes = 1 << 20;

}  // namespace taconite::gallery_cli

// Export and import of a gallery as JSON lines: a header line naming the model, then one line per
// template (or per identity without templates):
//   {"taconite_gallery":1,"embedding_dim":512,"model":"IR-18","model_fingerprint":"<sha256>"}
//   {"name":"astronaut","metadata":{},"embedding":[512 floats],"norm":21.7,"source":"a.png","created_unix":1764553200}
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>

#include "gallery_store.hpp"

namespace taconite::gallery_cli {

gallery::Status export_jsonl(const gallery::GalleryStore& store, std::ostream& out);

struct ImportSummary {
  std::int64_t identities = 0;  // identities written to (new or existing)
  std::int64_t templates = 0;
  bool created = false;  // the gallery file was created from the header
};

// Reads `in` (named `source` in errors) into the gallery at `path`, creating it from the header
// when it does not exist; refuses a header of another model or embedding size. Each identity's
// templates are one transaction.
Result<ImportSummary> import_jsonl(const std::filesystem::path& path, std::istream& in, const std::string& source);

// A line longer than this is refused (a 512-float template line is ~6 KiB).
inline constexpr std::size_t kMaxLineBytes = 1 << 20;

}  // namespace taconite::gallery_cli

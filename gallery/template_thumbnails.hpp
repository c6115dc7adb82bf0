// The aligned face crop (JPEG) a template was enrolled from, kept for the web page's people list
// (app/web). Templates carry no picture in the gallery's schema, so the crops live in an additive
// table of their own, `template_thumbnails` (template id -> JPEG), in the same SQLite file, on a
// connection of their own: the gallery's schema, version and revision are untouched, an older
// taconite ignores the table, and a template without a crop simply has no thumbnail.
//
// A PostgreSQL gallery keeps them in a table of the same name in its database, also on a connection
// of its own (no change notification: thumbnails are nothing a pipeline reloads). Errors name the
// gallery (a connection string's password masked). Not safe for concurrent calls: open one per thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "taconite/error.hpp"

namespace taconite::gallery {

// A thumbnail is at most this big (an aligned 112x112 crop is ~5 KB at quality 90).
inline constexpr std::size_t kMaxThumbnailBytes = 256 * 1024;

class TemplateThumbnails {
 public:
  // Opens the thumbnails of the gallery at `location` (which must exist), creating the table on the
  // first writable open.
  static Result<TemplateThumbnails> open(const std::string& location, bool writable);

  TemplateThumbnails(TemplateThumbnails&&) noexcept;
  TemplateThumbnails& operator=(TemplateThumbnails&&) noexcept;
  ~TemplateThumbnails();

  // False in a build without libpq for a PostgreSQL location: nothing is kept.
  bool kept() const;
  // Stores (or replaces) template `id`'s crop. Input error when it is empty or over kMaxThumbnailBytes.
  Status put(std::int64_t template_id, std::span<const unsigned char> jpeg);
  // The crop of each template asked, in order; empty when none is kept.
  Result<std::vector<std::vector<unsigned char>>> get(std::span<const std::int64_t> template_ids) const;
  // Which of these templates have a crop (without reading the pictures).
  Result<std::vector<bool>> has(std::span<const std::int64_t> template_ids) const;
  // Deletes the crops of templates the gallery no longer has (after an identity or template was
  // removed); returns how many went.
  Result<std::size_t> remove_orphans();

 private:
  struct Impl;
  explicit TemplateThumbnails(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace taconite::gallery

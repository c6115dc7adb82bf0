// Where TemplateThumbnails (template_thumbnails.hpp) keeps the crops: the SQLite file's table
// (template_thumbnails.cpp) or the PostgreSQL database's (template_thumbnails_pg.cpp; in a build
// without libpq, template_thumbnails_no_pg.cpp keeps none). Private to the gallery library.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "taconite/error.hpp"

namespace taconite::gallery {

class ThumbnailTable {
 public:
  virtual ~ThumbnailTable() = default;
  virtual Status put(std::int64_t template_id, std::span<const unsigned char> jpeg) = 0;
  virtual Result<std::vector<std::vector<unsigned char>>> get(std::span<const std::int64_t> ids) const = 0;
  virtual Result<std::vector<bool>> has(std::span<const std::int64_t> ids) const = 0;
  virtual Result<std::size_t> remove_orphans() = 0;
};

// The PostgreSQL gallery's table, on a connection of its own (created when writable); nullptr in a
// build without libpq.
Result<std::unique_ptr<ThumbnailTable>> open_pg_thumbnails(const std::string& location, bool writable);

}  // namespace taconite::gallery

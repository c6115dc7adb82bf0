// A build without libpq (-Dpostgresql=disabled): GalleryStore refuses PostgreSQL locations, and
// TemplateThumbnails keeps nothing for them.
#include "template_thumbnail_table.hpp"

namespace taconite::gallery {

Result<std::unique_ptr<ThumbnailTable>> open_pg_thumbnails(const std::string&, bool) {
  return std::unique_ptr<ThumbnailTable>();
}

}  // namespace taconite::gallery

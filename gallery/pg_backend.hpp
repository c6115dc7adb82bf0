// How GalleryStore reaches the PostgreSQL backend: pg_backend.cpp (PgStore, libpq) or, in a build
// without libpq (-Dpostgresql=disabled), pg_unavailable.cpp, whose connect and create refuse with
// an Input error naming the (masked) location and how to rebuild. Private to the gallery library.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "gallery_backend.hpp"

namespace taconite::gallery {

Result<std::unique_ptr<GalleryBackend>> connect_postgres(const std::string& location);
Result<std::unique_ptr<GalleryBackend>> create_postgres(const std::string& location, const ModelFingerprint& model,
                                                        int dim);
// One of libpq's connection keywords (`host`, `dbname`, `service`, ...).
bool is_libpq_keyword(std::string_view key);

}  // namespace taconite::gallery

#include "pg_backend.hpp"

#include <libpq-fe.h>

#include "pg_store.hpp"

namespace taconite::gallery {

namespace {

Result<std::unique_ptr<GalleryBackend>> as_backend(Result<std::unique_ptr<PgStore>> store) {
  if (!store) return store.error();
  return std::unique_ptr<GalleryBackend>(std::move(store.value()));
}

}  // namespace

bool postgres_available() { return true; }

Result<std::unique_ptr<GalleryBackend>> connect_postgres(const std::string& location) {
  return as_backend(PgStore::connect(location));
}

Result<std::unique_ptr<GalleryBackend>> create_postgres(const std::string& location, const ModelFingerprint& model,
                                                        int dim) {
  return as_backend(PgStore::create(location, model, dim));
}

// The keywords are those of an empty string's parse (it reads no file): whatever this libpq knows.
bool is_libpq_keyword(std::string_view key) {
  PQconninfoOption* keywords = PQconninfoParse("", nullptr);
  bool known = false;
  for (PQconninfoOption* o = keywords; o && o->keyword; ++o) known = known || key == o->keyword;
  PQconninfoFree(keywords);
  return known;
}

}  // namespace taconite::gallery

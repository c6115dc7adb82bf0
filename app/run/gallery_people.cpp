#include "gallery_people.hpp"

#include <utility>

#include "gallery_store.hpp"

namespace taconite::app {

namespace {

std::int64_t gallery_revision(const std::string& location) {
  Result<gallery::GalleryStore> store = gallery::GalleryStore::open(location, gallery::GalleryStore::Access::ReadOnly);
  if (!store) return -1;
  Result<std::int64_t> revision = store.value().revision();
  return revision ? revision.value() : -1;
}

}  // namespace

std::vector<std::string> gallery_people(const std::string& location, std::string* why) {
  std::vector<std::string> names;
  Result<gallery::GalleryStore> store = gallery::GalleryStore::open(location, gallery::GalleryStore::Access::ReadOnly);
  Result<std::vector<gallery::IdentityRow>> rows =
      store ? store.value().identities() : Result<std::vector<gallery::IdentityRow>>(store.error());
  if (!rows) {
    if (why) *why = rows.error().message;
    return names;
  }
  for (const gallery::IdentityRow& row : rows.value()) names.push_back(row.name);
  return names;
}

GalleryPeopleWatch::GalleryPeopleWatch(std::string location, Changed changed, unsigned period_s)
    : location_(std::move(location)), changed_(std::move(changed)), revision_(gallery_revision(location_)) {
  source_ = g_timeout_add_seconds(period_s, look, this);
}

GalleryPeopleWatch::~GalleryPeopleWatch() {
  if (source_) g_source_remove(source_);
}

gboolean GalleryPeopleWatch::look(gpointer data) {
  auto* self = static_cast<GalleryPeopleWatch*>(data);
  const std::int64_t revision = gallery_revision(self->location_);
  if (revision >= 0 && revision != self->revision_) {
    self->revision_ = revision;
    self->changed_(gallery_people(self->location_));
  }
  return G_SOURCE_CONTINUE;
}

}  // namespace taconite::app

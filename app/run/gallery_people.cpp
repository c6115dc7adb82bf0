#include "gallery_people.hpp"

#include <optional>
#include <utility>

#include "gallery_store.hpp"

namespace taconite::app {

namespace {

using gallery::GalleryStore;

Result<GalleryStore> open_read_only(const std::string& location) {
  return GalleryStore::open(location, GalleryStore::Access::ReadOnly);
}

Result<std::vector<std::string>> names_in(const GalleryStore& store) {
  Result<std::vector<gallery::IdentityRow>> rows = store.identities();
  if (!rows) return rows.error();
  std::vector<std::string> names;
  for (const gallery::IdentityRow& row : rows.value()) names.push_back(row.name);
  return names;
}

}  // namespace

std::vector<std::string> gallery_people(const std::string& location, std::string* why) {
  Result<GalleryStore> store = open_read_only(location);
  Result<std::vector<std::string>> names = store ? names_in(store.value()) : store.error();
  if (names) return names.value();
  if (why) *why = names.error().message;
  return {};
}

GalleryPeopleWatch::GalleryPeopleWatch(std::string location, Changed changed, std::chrono::seconds period)
    : location_(std::move(location)), changed_(std::move(changed)), period_(period) {
  Result<GalleryStore> store = open_read_only(location_);
  Result<std::int64_t> revision = store ? store.value().revision() : store.error();
  thread_ = std::thread([this, first = revision ? revision.value() : -1] { run(first); });
}

GalleryPeopleWatch::~GalleryPeopleWatch() {
  {
    std::lock_guard<std::mutex> guard(lock_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

// One connection kept while it works (opened again after a failure), its revision read each period.
void GalleryPeopleWatch::run(std::int64_t seen) {
  std::optional<GalleryStore> store;
  std::unique_lock<std::mutex> guard(lock_);
  while (!wake_.wait_for(guard, period_, [this] { return stopping_; })) {
    guard.unlock();
    if (!store) {
      if (Result<GalleryStore> opened = open_read_only(location_)) store.emplace(std::move(opened.value()));
    }
    if (store) {
      Result<std::int64_t> revision = store->revision();
      if (!revision) {
        store.reset();  // gone or broken: opened again next time
      } else if (revision.value() != seen) {
        if (Result<std::vector<std::string>> names = names_in(*store)) {
          seen = revision.value();
          changed_(std::move(names.value()));
        }
      }
    }
    guard.lock();
  }
}

}  // namespace taconite::app

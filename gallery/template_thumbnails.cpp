#include "template_thumbnails.hpp"

#include <sqlite3.h>

#include "gallery_store.hpp"
#include "unix_time.hpp"

namespace taconite::gallery {

namespace {

constexpr const char* kCreateTable =
    "CREATE TABLE IF NOT EXISTS template_thumbnails("
    " template_id INTEGER PRIMARY KEY,"
    " jpeg BLOB NOT NULL,"
    " created_unix INTEGER NOT NULL)";

struct Statement {
  sqlite3_stmt* st = nullptr;
  Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(st); }
};

}  // namespace

struct TemplateThumbnails::Impl {
  std::string location;
  sqlite3* db = nullptr;  // null: a PostgreSQL gallery, nothing kept
  bool table = false;     // the table exists (a read-only open of a gallery without it reads none)

  ~Impl() { sqlite3_close_v2(db); }

  Error error(const std::string& what) const {
    return Error{ErrorKind::Io, location + ": template thumbnails: " + what + ": " + (db ? sqlite3_errmsg(db) : "")};
  }

  Result<bool> prepare(const char* sql, Statement& s) const {
    if (sqlite3_prepare_v2(db, sql, -1, &s.st, nullptr) != SQLITE_OK) return error("cannot prepare");
    return true;
  }
};

TemplateThumbnails::TemplateThumbnails(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TemplateThumbnails::TemplateThumbnails(TemplateThumbnails&&) noexcept = default;
TemplateThumbnails& TemplateThumbnails::operator=(TemplateThumbnails&&) noexcept = default;
TemplateThumbnails::~TemplateThumbnails() = default;

Result<TemplateThumbnails> TemplateThumbnails::open(const std::string& location, bool writable) {
  auto impl = std::make_unique<Impl>();
  impl->location = location;
  if (is_postgres_location(location)) return TemplateThumbnails(std::move(impl));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(location, ec))
    return Error{ErrorKind::Io, location + ": no such gallery file"};
  const int flags = (writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(location.c_str(), &impl->db, flags, nullptr) != SQLITE_OK) return impl->error("cannot open");
  sqlite3_busy_timeout(impl->db, 5000);
  if (writable && sqlite3_exec(impl->db, kCreateTable, nullptr, nullptr, nullptr) != SQLITE_OK)
    return impl->error("cannot create the table");
  Statement s;
  if (Result<bool> p = impl->prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                                     "'template_thumbnails'", s);
      !p)
    return p.error();
  impl->table = sqlite3_step(s.st) == SQLITE_ROW;
  return TemplateThumbnails(std::move(impl));
}

bool TemplateThumbnails::kept() const { return impl_->db != nullptr; }

Status TemplateThumbnails::put(std::int64_t template_id, std::span<const unsigned char> jpeg) {
  if (!impl_->db) return Ok{};
  if (jpeg.empty() || jpeg.size() > kMaxThumbnailBytes)
    return Error{ErrorKind::Input, impl_->location + ": template " + std::to_string(template_id) + "'s thumbnail has " +
                                       std::to_string(jpeg.size()) + " bytes (1.." +
                                       std::to_string(kMaxThumbnailBytes) + " allowed)"};
  Statement s;
  if (Result<bool> p = impl_->prepare(
          "INSERT OR REPLACE INTO template_thumbnails(template_id, jpeg, created_unix) VALUES(?, ?, ?)", s);
      !p)
    return p.error();
  sqlite3_bind_int64(s.st, 1, template_id);
  sqlite3_bind_blob64(s.st, 2, jpeg.data(), jpeg.size(), SQLITE_STATIC);
  sqlite3_bind_int64(s.st, 3, now_unix());
  if (sqlite3_step(s.st) != SQLITE_DONE) return impl_->error("cannot store template " + std::to_string(template_id));
  return Ok{};
}

Result<std::vector<std::vector<unsigned char>>> TemplateThumbnails::get(
    std::span<const std::int64_t> template_ids) const {
  std::vector<std::vector<unsigned char>> out(template_ids.size());
  if (!impl_->db || !impl_->table) return out;
  Statement s;
  if (Result<bool> p = impl_->prepare("SELECT jpeg FROM template_thumbnails WHERE template_id = ?", s); !p)
    return p.error();
  for (std::size_t i = 0; i < template_ids.size(); ++i) {
    sqlite3_reset(s.st);
    sqlite3_bind_int64(s.st, 1, template_ids[i]);
    const int rc = sqlite3_step(s.st);
    if (rc == SQLITE_DONE) continue;
    if (rc != SQLITE_ROW) return impl_->error("cannot read template " + std::to_string(template_ids[i]));
    const auto* bytes = static_cast<const unsigned char*>(sqlite3_column_blob(s.st, 0));
    const int n = sqlite3_column_bytes(s.st, 0);
    if (n < 0 || static_cast<std::size_t>(n) > kMaxThumbnailBytes)
      return impl_->error("template " + std::to_string(template_ids[i]) + "'s thumbnail is too big");
    if (bytes) out[i].assign(bytes, bytes + n);
  }
  return out;
}

Result<std::vector<bool>> TemplateThumbnails::has(std::span<const std::int64_t> template_ids) const {
  std::vector<bool> out(template_ids.size(), false);
  if (!impl_->db || !impl_->table) return out;
  Statement s;
  if (Result<bool> p = impl_->prepare("SELECT 1 FROM template_thumbnails WHERE template_id = ?", s); !p)
    return p.error();
  for (std::size_t i = 0; i < template_ids.size(); ++i) {
    sqlite3_reset(s.st);
    sqlite3_bind_int64(s.st, 1, template_ids[i]);
    const int rc = sqlite3_step(s.st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
      return impl_->error("cannot read template " + std::to_string(template_ids[i]));
    out[i] = rc == SQLITE_ROW;
  }
  return out;
}

Result<std::size_t> TemplateThumbnails::remove_orphans() {
  if (!impl_->db || !impl_->table) return std::size_t{0};
  if (sqlite3_exec(impl_->db,
                   "DELETE FROM template_thumbnails WHERE template_id NOT IN (SELECT id FROM templates)",
                   nullptr, nullptr, nullptr) != SQLITE_OK)
    return impl_->error("cannot delete the thumbnails of removed templates");
  return static_cast<std::size_t>(sqlite3_changes(impl_->db));
}

}  // namespace taconite::gallery

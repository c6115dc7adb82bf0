#include "template_thumbnails.hpp"

#include <sqlite3.h>

#include <unordered_set>

#include "gallery_store.hpp"
#include "template_thumbnail_table.hpp"
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

class SqliteThumbnails final : public ThumbnailTable {
 public:
  std::string location;
  sqlite3* db = nullptr;
  bool table = false;  // the table exists (a read-only open of a gallery without it reads none)

  ~SqliteThumbnails() override { sqlite3_close_v2(db); }

  Error error(const std::string& what) const {
    return Error{ErrorKind::Io, location + ": template thumbnails: " + what + ": " + (db ? sqlite3_errmsg(db) : "")};
  }

  Result<bool> prepare(const char* sql, Statement& s) const {
    if (sqlite3_prepare_v2(db, sql, -1, &s.st, nullptr) != SQLITE_OK) return error("cannot prepare");
    return true;
  }

  Status put(std::int64_t template_id, std::span<const unsigned char> jpeg) override {
    Statement s;
    if (Result<bool> p = prepare(
            "INSERT OR REPLACE INTO template_thumbnails(template_id, jpeg, created_unix) VALUES(?, ?, ?)", s);
        !p)
      return p.error();
    sqlite3_bind_int64(s.st, 1, template_id);
    sqlite3_bind_blob64(s.st, 2, jpeg.data(), jpeg.size(), SQLITE_STATIC);
    sqlite3_bind_int64(s.st, 3, now_unix());
    if (sqlite3_step(s.st) != SQLITE_DONE) return error("cannot store template " + std::to_string(template_id));
    return Ok{};
  }

  Result<std::vector<std::vector<unsigned char>>> get(std::span<const std::int64_t> ids) const override {
    std::vector<std::vector<unsigned char>> out(ids.size());
    if (!table) return out;
    Statement s;
    if (Result<bool> p = prepare("SELECT jpeg FROM template_thumbnails WHERE template_id = ?", s); !p)
      return p.error();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      sqlite3_reset(s.st);
      sqlite3_bind_int64(s.st, 1, ids[i]);
      const int rc = sqlite3_step(s.st);
      if (rc == SQLITE_DONE) continue;
      if (rc != SQLITE_ROW) return error("cannot read template " + std::to_string(ids[i]));
      const auto* bytes = static_cast<const unsigned char*>(sqlite3_column_blob(s.st, 0));
      const int n = sqlite3_column_bytes(s.st, 0);
      if (n < 0 || static_cast<std::size_t>(n) > kMaxThumbnailBytes)
        return error("template " + std::to_string(ids[i]) + "'s thumbnail is too big");
      if (bytes) out[i].assign(bytes, bytes + n);
    }
    return out;
  }

  Result<std::vector<bool>> has(std::span<const std::int64_t> ids) const override {
    std::vector<bool> out(ids.size(), false);
    if (!table) return out;
    // One scan of the ids kept (one row per template at most) instead of a query per template.
    Statement s;
    if (Result<bool> p = prepare("SELECT template_id FROM template_thumbnails", s); !p) return p.error();
    std::unordered_set<std::int64_t> kept;
    int rc;
    while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) kept.insert(sqlite3_column_int64(s.st, 0));
    if (rc != SQLITE_DONE) return error("cannot read the thumbnails' ids");
    for (std::size_t i = 0; i < ids.size(); ++i) out[i] = kept.count(ids[i]) > 0;
    return out;
  }

  Result<std::size_t> remove_orphans() override {
    if (!table) return std::size_t{0};
    if (sqlite3_exec(db, "DELETE FROM template_thumbnails WHERE template_id NOT IN (SELECT id FROM templates)",
                     nullptr, nullptr, nullptr) != SQLITE_OK)
      return error("cannot delete the thumbnails of removed templates");
    return static_cast<std::size_t>(sqlite3_changes(db));
  }
};

Result<std::unique_ptr<ThumbnailTable>> open_sqlite_thumbnails(const std::string& location, bool writable) {
  auto t = std::make_unique<SqliteThumbnails>();
  t->location = location;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(location, ec)) return Error{ErrorKind::Io, location + ": no such gallery file"};
  const int flags = (writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(location.c_str(), &t->db, flags, nullptr) != SQLITE_OK) return t->error("cannot open");
  sqlite3_busy_timeout(t->db, 5000);
  if (writable && sqlite3_exec(t->db, kCreateTable, nullptr, nullptr, nullptr) != SQLITE_OK)
    return t->error("cannot create the table");
  Statement s;
  if (Result<bool> p =
          t->prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'template_thumbnails'", s);
      !p)
    return p.error();
  t->table = sqlite3_step(s.st) == SQLITE_ROW;
  return std::unique_ptr<ThumbnailTable>(std::move(t));
}

}  // namespace

struct TemplateThumbnails::Impl {
  std::string location;
  std::unique_ptr<ThumbnailTable> table;  // null: nothing kept
};

TemplateThumbnails::TemplateThumbnails(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TemplateThumbnails::TemplateThumbnails(TemplateThumbnails&&) noexcept = default;
TemplateThumbnails& TemplateThumbnails::operator=(TemplateThumbnails&&) noexcept = default;
TemplateThumbnails::~TemplateThumbnails() = default;

Result<TemplateThumbnails> TemplateThumbnails::open(const std::string& location, bool writable) {
  auto impl = std::make_unique<Impl>();
  impl->location = location;
  Result<std::unique_ptr<ThumbnailTable>> table = is_postgres_location(location)
                                                       ? open_pg_thumbnails(location, writable)
                                                       : open_sqlite_thumbnails(location, writable);
  if (!table) return table.error();
  impl->table = std::move(table.value());
  return TemplateThumbnails(std::move(impl));
}

bool TemplateThumbnails::kept() const { return impl_->table != nullptr; }

Status TemplateThumbnails::put(std::int64_t template_id, std::span<const unsigned char> jpeg) {
  if (!impl_->table) return Ok{};
  if (jpeg.empty() || jpeg.size() > kMaxThumbnailBytes)
    return Error{ErrorKind::Input, impl_->location + ": template " + std::to_string(template_id) + "'s thumbnail has " +
                                       std::to_string(jpeg.size()) + " bytes (1.." +
                                       std::to_string(kMaxThumbnailBytes) + " allowed)"};
  return impl_->table->put(template_id, jpeg);
}

Result<std::vector<std::vector<unsigned char>>> TemplateThumbnails::get(
    std::span<const std::int64_t> template_ids) const {
  if (!impl_->table) return std::vector<std::vector<unsigned char>>(template_ids.size());
  return impl_->table->get(template_ids);
}

Result<std::vector<bool>> TemplateThumbnails::has(std::span<const std::int64_t> template_ids) const {
  if (!impl_->table) return std::vector<bool>(template_ids.size(), false);
  return impl_->table->has(template_ids);
}

Result<std::size_t> TemplateThumbnails::remove_orphans() {
  if (!impl_->table) return std::size_t{0};
  return impl_->table->remove_orphans();
}

}  // namespace taconite::gallery

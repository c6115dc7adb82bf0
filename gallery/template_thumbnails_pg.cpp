// The template thumbnails of a PostgreSQL gallery (template_thumbnail_table.hpp): the table
// template_thumbnails in the gallery's database, on a connection of its own, so the gallery's
// schema and its change notifications are untouched (a thumbnail is no change a pipeline reloads).
#include <libpq-fe.h>

#include <cstdlib>
#include <memory>
#include <unordered_set>

#include "displayed_location.hpp"
#include "template_thumbnail_table.hpp"
#include "template_thumbnails.hpp"
#include "unix_time.hpp"

namespace taconite::gallery {

namespace {

constexpr const char* kCreateTable =
    "CREATE TABLE IF NOT EXISTS template_thumbnails("
    " template_id bigint PRIMARY KEY,"
    " jpeg bytea NOT NULL,"
    " created_unix bigint NOT NULL)";

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

class PgThumbnails final : public ThumbnailTable {
 public:
  std::string shown;  // the location without a password
  PGconn* conn = nullptr;
  bool table = false;

  ~PgThumbnails() override {
    if (conn) PQfinish(conn);
  }

  Error error(const std::string& what) const {
    std::string message = conn ? PQerrorMessage(conn) : "";
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    if (const std::size_t nl = message.find('\n'); nl != std::string::npos) message.resize(nl);
    return Error{ErrorKind::Io, shown + ": template thumbnails: " + what + ": " + message};
  }

  // A statement with text parameters, results in binary (a bytea as its bytes).
  PgResultPtr exec(const char* sql, std::initializer_list<const char*> params, const int* lengths = nullptr,
                   const int* formats = nullptr) const {
    const std::vector<const char*> values(params);
    return PgResultPtr(PQexecParams(conn, sql, static_cast<int>(values.size()), nullptr, values.data(), lengths,
                                    formats, 1));
  }

  Status put(std::int64_t template_id, std::span<const unsigned char> jpeg) override {
    const std::string id = std::to_string(template_id), now = std::to_string(now_unix());
    const int lengths[] = {0, static_cast<int>(jpeg.size()), 0};
    const int formats[] = {0, 1, 0};
    PgResultPtr r = exec("INSERT INTO template_thumbnails(template_id, jpeg, created_unix) VALUES($1::bigint, $2, "
                         "$3::bigint) ON CONFLICT (template_id) DO UPDATE SET jpeg = EXCLUDED.jpeg",
                         {id.c_str(), reinterpret_cast<const char*>(jpeg.data()), now.c_str()}, lengths, formats);
    if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK) return error("cannot store template " + id);
    table = true;
    return Ok{};
  }

  Result<std::vector<std::vector<unsigned char>>> get(std::span<const std::int64_t> ids) const override {
    std::vector<std::vector<unsigned char>> out(ids.size());
    if (!table) return out;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::string id = std::to_string(ids[i]);
      PgResultPtr r = exec("SELECT jpeg FROM template_thumbnails WHERE template_id = $1::bigint", {id.c_str()});
      if (!r || PQresultStatus(r.get()) != PGRES_TUPLES_OK) return error("cannot read template " + id);
      if (PQntuples(r.get()) == 0) continue;
      const std::size_t n = static_cast<std::size_t>(PQgetlength(r.get(), 0, 0));
      if (n > kMaxThumbnailBytes) return error("template " + id + "'s thumbnail is too big");
      const auto* bytes = reinterpret_cast<const unsigned char*>(PQgetvalue(r.get(), 0, 0));
      out[i].assign(bytes, bytes + n);
    }
    return out;
  }

  Result<std::vector<bool>> has(std::span<const std::int64_t> ids) const override {
    std::vector<bool> out(ids.size(), false);
    if (!table) return out;
    // One query for the ids kept (one row per template at most), not a round trip per template.
    PgResultPtr r = exec("SELECT template_id FROM template_thumbnails", {});
    if (!r || PQresultStatus(r.get()) != PGRES_TUPLES_OK) return error("cannot read the thumbnails' ids");
    std::unordered_set<std::int64_t> kept;
    for (int row = 0; row < PQntuples(r.get()); ++row) {
      if (PQgetlength(r.get(), row, 0) != 8) return error("a thumbnail's template id is not a bigint");
      std::uint64_t v = 0;
      for (int b = 0; b < 8; ++b) v = (v << 8) | static_cast<unsigned char>(PQgetvalue(r.get(), row, 0)[b]);
      kept.insert(static_cast<std::int64_t>(v));
    }
    for (std::size_t i = 0; i < ids.size(); ++i) out[i] = kept.count(ids[i]) > 0;
    return out;
  }

  Result<std::size_t> remove_orphans() override {
    if (!table) return std::size_t{0};
    PgResultPtr r = exec("DELETE FROM template_thumbnails WHERE template_id NOT IN (SELECT id FROM templates)", {});
    if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK)
      return error("cannot delete the thumbnails of removed templates");
    return static_cast<std::size_t>(std::strtoull(PQcmdTuples(r.get()), nullptr, 10));
  }
};

}  // namespace

Result<std::unique_ptr<ThumbnailTable>> open_pg_thumbnails(const std::string& location, bool writable) {
  // The caller opened the gallery with GalleryStore first, which refuses a password in the string.
  auto t = std::make_unique<PgThumbnails>();
  t->shown = displayed_location(location);
  t->conn = PQconnectdb(location.c_str());
  if (!t->conn || PQstatus(t->conn) != CONNECTION_OK) return t->error("cannot connect");
  PQsetNoticeProcessor(t->conn, [](void*, const char*) {}, nullptr);
  if (writable) {
    PgResultPtr r(PQexec(t->conn, kCreateTable));
    if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK) return t->error("cannot create the table");
  }
  PgResultPtr r = t->exec("SELECT to_regclass('template_thumbnails') IS NOT NULL", {});
  if (!r || PQresultStatus(r.get()) != PGRES_TUPLES_OK || PQntuples(r.get()) != 1)
    return t->error("cannot look for the table");
  // Binary boolean: one byte.
  t->table = PQgetlength(r.get(), 0, 0) == 1 && PQgetvalue(r.get(), 0, 0)[0] != 0;
  return std::unique_ptr<ThumbnailTable>(std::move(t));
}

}  // namespace taconite::gallery

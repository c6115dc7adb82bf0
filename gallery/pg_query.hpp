// What the PostgreSQL side of the gallery (pg_store.cpp, pg_unknown_faces.cpp) shares: the
// connection, results that free themselves, and one way to run a statement and report its error.
// Private to the gallery library.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "pg_store.hpp"

namespace taconite::gallery {

struct PgStore::Connection {
  PGconn* conn = nullptr;
  ~Connection() {
    if (conn) PQfinish(conn);
  }
};

struct PgResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, PgResultDeleter>;

// A text column as a number (0 when it is none).
std::int64_t to_int(const char* text);

// libpq's messages end with a newline and may hold several lines: one line for ours, anything
// in it that reads as a password masked (displayed_location.hpp).
std::string one_line(const char* text);

// A double as a text parameter that reads back the same value.
std::string double_text(double value);

// A binary result column of 8 bytes (network byte order): bigint, or double precision through
// std::bit_cast.
inline std::uint64_t be64(const char* bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[i]);
  return v;
}

// Runs statements with text parameters (and binary ones where `binary` says so); an Io error
// naming the gallery and the server's message when it fails. Without parameters it runs several
// statements (PQexec).
Result<PgResult> run(PGconn* conn, const std::string& gallery, const char* what, const char* sql,
                     std::span<const std::string> params = {}, std::span<const int> binary = {});

}  // namespace taconite::gallery

// A fresh gallery for the event-log tests: an SQLite file in a temporary directory, or (when
// TACONITE_TEST_PG_LOCATION names a database of the private server test_app_history.py starts)
// that PostgreSQL database emptied and made a gallery again.
#pragma once

#include <libpq-fe.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "gallery_store.hpp"
#include "track_event_log.hpp"

namespace taconite::test {

inline constexpr int kTestDim = 4;

inline gallery::ModelFingerprint test_model() { return {std::string(64, 'a'), "IR-test"}; }

// The PostgreSQL database of the test run, when there is one.
inline std::optional<std::string> postgres_location() {
  const char* location = std::getenv("TACONITE_TEST_PG_LOCATION");
  if (!location || !*location) return std::nullopt;
  return std::string(location);
}

// Drops every table, so each test starts from a database without a gallery.
inline std::string empty_postgres(const std::string& location) {
  PGconn* conn = PQconnectdb(location.c_str());
  std::string error;
  if (PQstatus(conn) != CONNECTION_OK) {
    error = PQerrorMessage(conn);
  } else {
    PGresult* r = PQexec(conn,
                         "SET client_min_messages = warning; DROP TABLE IF EXISTS track_events, unknown_faces, "
                         "templates, identities, gallery CASCADE");
    if (PQresultStatus(r) != PGRES_COMMAND_OK) error = PQerrorMessage(conn);
    PQclear(r);
  }
  PQfinish(conn);
  return error;
}

// Runs one SQL statement (PostgreSQL), returning the error text ("" on success).
inline std::string postgres_exec(const std::string& location, const std::string& sql) {
  PGconn* conn = PQconnectdb(location.c_str());
  std::string error;
  PGresult* r = PQexec(conn, sql.c_str());
  if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) error = PQerrorMessage(conn);
  PQclear(r);
  PQfinish(conn);
  return error;
}

}  // namespace taconite::test

// The files libpq reads by itself when it connects: the service file (when a service is named:
// `service=` or PGSERVICE) — PGSERVICEFILE, else ~/.pg_service.conf, then pg_service.conf in
// PGSYSCONFDIR (else libpq's built-in directory) — and the password file: `passfile=`, else
// PGPASSFILE, else ~/.pgpass. libpq opens them without a check of its own: a FIFO blocks it for
// good, /dev/zero makes it spin, and a password file that is not a plain file makes it print on
// stderr. Each is checked first, as every other file the product reads is. Private to the gallery
// library.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <string>

#include "gallery_store.hpp"

namespace taconite::gallery {

// A service or password file holds a few lines per database: far below this.
inline constexpr std::uint64_t kMaxPgClientFileBytes = 1024 * 1024;

// Input error naming the setting (the environment variable, `service=`/`passfile=` or the default)
// and the path when one of the files the connection `options` will make libpq read exists but is
// not a regular file (FIFO, device, directory, ...) or is larger than kMaxPgClientFileBytes. A
// file that is absent or cannot be looked at is left to libpq (it skips those). `shown` names the
// gallery (displayed_location).
Status check_pg_client_files(const PQconninfoOption* options, const std::string& shown);

// A connection string checked before anything connects with it: it parses (an Input error with
// libpq's words, any secret masked), holds no password (refused: it would show in process lists and
// logs), and the client files it makes libpq read pass check_pg_client_files. `shown` names the
// gallery (displayed_location).
Status check_pg_location(const std::string& location, const std::string& shown);

}  // namespace taconite::gallery

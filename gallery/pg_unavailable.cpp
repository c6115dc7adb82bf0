// The PostgreSQL backend of a build without libpq: a PostgreSQL location is still recognised (so
// it is not taken for an SQLite file name), and refused saying how to get the support.
#include <algorithm>
#include <array>

#include "displayed_location.hpp"
#include "pg_backend.hpp"

namespace taconite::gallery {

namespace {

Error unsupported(const std::string& location) {
  return Error{ErrorKind::Input, displayed_location(location) +
                                     ": this taconite was built without PostgreSQL support (libpq; rebuild with "
                                     "libpq-dev and -Dpostgresql=enabled)"};
}

}  // namespace

bool postgres_available() { return false; }

Result<std::unique_ptr<GalleryBackend>> connect_postgres(const std::string& location) {
  return unsupported(location);
}

Result<std::unique_ptr<GalleryBackend>> create_postgres(const std::string& location, const ModelFingerprint&, int) {
  return unsupported(location);
}

// libpq 15's keywords (PQconninfoParse("") of Debian 12's libpq5), as pg_backend.cpp asks libpq.
bool is_libpq_keyword(std::string_view key) {
  static constexpr std::array<std::string_view, 36> kKeywords = {
      "service", "user", "password", "passfile", "channel_binding", "connect_timeout", "dbname", "host", "hostaddr",
      "port", "client_encoding", "options", "application_name", "fallback_application_name", "keepalives",
      "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout", "sslmode", "sslcompression",
      "sslcert", "sslkey", "sslpassword", "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requirepeer",
      "ssl_min_protocol_version", "ssl_max_protocol_version", "gssencmode", "krbsrvname", "gsslib", "replication",
      "target_session_attrs"};
  return std::find(kKeywords.begin(), kKeywords.end(), key) != kKeywords.end();
}

}  // namespace taconite::gallery

#include "pg_query.hpp"

#include <charconv>
#include <cstring>
#include <vector>

#include "displayed_location.hpp"

namespace taconite::gallery {

std::int64_t to_int(const char* text) {
  std::int64_t value = 0;
  std::from_chars(text, text + std::strlen(text), value);
  return value;
}

std::string one_line(const char* text) {
  std::string line = text ? text : "";
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  for (char& c : line)
    if (c == '\n') c = ' ';
  return mask_secrets(line, {});
}

std::string double_text(double value) {
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return ec == std::errc() ? std::string(text, end) : std::string("0");
}

Result<PgResult> run(PGconn* conn, const std::string& gallery, const char* what, const char* sql,
                     std::span<const std::string> params, std::span<const int> binary) {
  std::vector<const char*> values;
  std::vector<int> lengths, formats;
  for (std::size_t i = 0; i < params.size(); ++i) {
    values.push_back(params[i].data());
    lengths.push_back(static_cast<int>(params[i].size()));
    formats.push_back(i < binary.size() ? binary[i] : 0);
  }
  PgResult r(params.empty() ? PQexec(conn, sql)
                            : PQexecParams(conn, sql, static_cast<int>(params.size()), nullptr, values.data(),
                                           lengths.data(), formats.data(), 0));
  const ExecStatusType status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    std::string message = gallery + ": " + what + ": " + one_line(PQerrorMessage(conn));
    if (PQstatus(conn) != CONNECTION_OK) message += " (connection to the server lost)";
    return Error{ErrorKind::Io, message};
  }
  return r;
}

}  // namespace taconite::gallery

#include "pg_client_files.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "bundle/regular_file.hpp"
#include "displayed_location.hpp"
#include "pg_query.hpp"

namespace taconite::gallery {

namespace {

// libpq's directory for the system-wide service file when PGSYSCONFDIR is not set (Debian's
// build: pg_config --sysconfdir).
constexpr const char* kBuiltInSysconfDir = "/etc/postgresql-common";

std::string option(const PQconninfoOption* options, const char* keyword) {
  for (const PQconninfoOption* o = options; o && o->keyword; ++o)
    if (std::strcmp(o->keyword, keyword) == 0 && o->val) return o->val;
  return {};
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// The home directory as libpq finds it: HOME, else the user's passwd entry.
std::optional<std::string> home_directory() {
  if (std::string home = environment("HOME"); !home.empty()) return home;
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(geteuid(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found || !found->pw_dir)
    return std::nullopt;
  return std::string(found->pw_dir);
}

// A file libpq will read, and where its path came from (for the message).
struct ClientFile {
  std::string path;
  std::string setting;  // e.g. "PGSERVICEFILE", "the default ~/.pgpass"
};

std::vector<ClientFile> files_to_read(const PQconninfoOption* options) {
  std::vector<ClientFile> files;
  const std::optional<std::string> home = home_directory();
  std::string service = option(options, "service");
  if (service.empty()) service = environment("PGSERVICE");
  if (!service.empty()) {
    if (std::string named = environment("PGSERVICEFILE"); !named.empty())
      files.push_back({named, "PGSERVICEFILE"});
    else if (home)
      files.push_back({*home + "/.pg_service.conf", "the default service file ~/.pg_service.conf"});
    if (std::string dir = environment("PGSYSCONFDIR"); !dir.empty())
      files.push_back({dir + "/pg_service.conf", "PGSYSCONFDIR"});
    else
      files.push_back({std::string(kBuiltInSysconfDir) + "/pg_service.conf", "the system-wide service file"});
  }
  if (std::string named = option(options, "passfile"); !named.empty())
    files.push_back({named, "the connection string's passfile="});
  else if (std::string env = environment("PGPASSFILE"); !env.empty())
    files.push_back({env, "PGPASSFILE"});
  else if (home)
    files.push_back({*home + "/.pgpass", "the default password file ~/.pgpass"});
  return files;
}

}  // namespace

Status check_pg_client_files(const PQconninfoOption* options, const std::string& shown) {
  for (const ClientFile& f : files_to_read(options)) {
    struct stat st {};
    if (::stat(f.path.c_str(), &st) != 0) continue;  // libpq skips what it cannot stat
    std::string problem;
    if (!S_ISREG(st.st_mode))
      problem = bundle::not_regular_problem(st.st_mode);
    else if (static_cast<std::uint64_t>(st.st_size) > kMaxPgClientFileBytes)
      problem = "holds " + std::to_string(st.st_size) + " bytes, more than a service or password file may (" +
                std::to_string(kMaxPgClientFileBytes) + ")";
    if (!problem.empty())
      return Error{ErrorKind::Input, shown + ": " + f.setting + " names " + f.path + ", which " + problem +
                                         "; not handed to libpq (it would block on a FIFO, spin on a device): "
                                         "make it a regular file or change the setting"};
  }
  return Ok{};
}

Status check_pg_location(const std::string& location, const std::string& shown) {
  char* parse_error = nullptr;
  PQconninfoOption* options = PQconninfoParse(location.c_str(), &parse_error);
  if (!options) {
    // libpq's text quotes the string it was given: masked.
    std::string why = mask_secrets(one_line(parse_error ? parse_error : "out of memory"), location);
    PQfreemem(parse_error);
    return Error{ErrorKind::Input, shown + ": malformed connection string: " + why};
  }
  bool has_password = false;
  for (PQconninfoOption* o = options; o->keyword; ++o)
    if (std::strcmp(o->keyword, "password") == 0 && o->val && *o->val) has_password = true;
  Status files = check_pg_client_files(options, shown);
  PQconninfoFree(options);
  if (has_password)
    return Error{ErrorKind::Input, shown +
                                       ": the connection string holds a password; refused (it would show in "
                                       "process lists and logs): put it in a password file (PGPASSFILE or "
                                       "~/.pgpass) or a service file (PGSERVICEFILE)"};
  return files;
}

}  // namespace taconite::gallery

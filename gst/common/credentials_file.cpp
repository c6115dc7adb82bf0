#include "credentials_file.hpp"

#include <sys/stat.h>

#include <cstdio>

#include "input_file.hpp"

namespace taconite::gst {

namespace {

constexpr const char* kFormat = " (expected a user name line and a password line)";

// Why `path` may not hold a secret (anyone on the machine may read or change it), or "".
std::string open_to_others(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return "";  // reading it says what is wrong
  if ((info.st_mode & (S_IROTH | S_IWOTH)) == 0) return "";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
  return std::string("every user of this machine may ") + ((info.st_mode & S_IROTH) ? "read" : "change") +
         " it (mode " + mode + "): make it private, e.g. chmod 600 '" + path + "'";
}

}  // namespace

Result<Credentials> read_credentials_file(const std::string& path, CredentialsAccess access) {
  if (access == CredentialsAccess::OwnerOnly)
    if (const std::string problem = open_to_others(path); !problem.empty())
      return Error{ErrorKind::Input, "credentials file '" + path + "' is refused: " + problem};
  Result<std::string> text = read_regular_file(path, kMaxCredentialsBytes);
  if (!text)
    return Error{text.error().kind, "cannot read the credentials file '" + path + "': " + text.error().message +
                                        kFormat};
  const std::size_t newline = text.value().find('\n');
  Credentials c{text.value().substr(0, newline), newline == std::string::npos ? "" : text.value().substr(newline + 1)};
  for (std::string* s : {&c.username, &c.password}) {
    if (const std::size_t end = s->find('\n'); end != std::string::npos) s->resize(end);
    if (!s->empty() && s->back() == '\r') s->pop_back();
  }
  if (c.username.empty())
    return Error{ErrorKind::Input, "credentials file '" + path + "' has no user name on its first line" + kFormat};
  return c;
}

}  // namespace taconite::gst

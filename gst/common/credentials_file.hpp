// A credentials file: the user name on the first line, the password on the second (taconitepublish's
// MQTT broker, taconitecamera's RTSP / HTTP camera), so a password never goes on a command line.
// Neither the password nor the file's contents ever appear in an error message.
#pragma once

#include <string>

#include "taconite/error.hpp"

namespace taconite::gst {

struct Credentials {
  std::string username, password;
};

enum class CredentialsAccess {
  Any,         // any regular file the process can read
  OwnerOnly,   // also refused when every user may read or write it (mode o+r or o+w)
};

// At most this many bytes are read (a user name and a password, not a data file).
inline constexpr std::size_t kMaxCredentialsBytes = 64 * 1024;

// The file's user name and password (a CR before a newline dropped; the password may be empty).
// Errors name the file and say what is expected: Io when it cannot be read (missing, a FIFO, a
// directory), Input when it is too big, has no user name or, with OwnerOnly, is open to others.
Result<Credentials> read_credentials_file(const std::string& path, CredentialsAccess access);

}  // namespace taconite::gst

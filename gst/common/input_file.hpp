// Small files elements read at start (credentials, TLS files): opened without blocking, and
// refused unless they are regular files, so a FIFO without a writer cannot hang the state change.
// The runtime's bundle/regular_file.hpp (its own small static library) does the work.
#pragma once

#include <cstddef>
#include <string>

#include "taconite/error.hpp"

namespace taconite::gst {

// "" when `path` is a regular file (symlinks followed), else why not: e.g. "does not exist",
// "permission denied", "is a FIFO, not a regular file".
std::string regular_file_problem(const std::string& path);

// The contents of the regular file `path` of at most `max_bytes`; else an error not naming the
// file (the caller does): Io as regular_file_problem says, Input "is N bytes, more than M".
Result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes);

}  // namespace taconite::gst

// Files taconitepublish reads (the MQTT credentials and TLS files): opened without blocking, and
// refused unless they are regular files, so a FIFO without a writer cannot hang the state change.
// The runtime's bundle/regular_file.hpp (its own small static library) does the work.
#pragma once

#include <cstddef>
#include <string>

namespace taconite::gst {

// "" when `path` is a regular file (symlinks followed), else why not: e.g. "does not exist",
// "permission denied", "is a FIFO, not a regular file".
std::string regular_file_problem(const std::string& path);

// Reads the regular file `path` of at most `max_bytes` into `contents`; false with `problem` set
// (as regular_file_problem, or "is N bytes, more than M").
bool read_regular_file(const std::string& path, std::size_t max_bytes, std::string* contents, std::string* problem);

}  // namespace taconite::gst

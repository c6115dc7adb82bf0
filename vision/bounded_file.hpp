// Reading a whole file that must be a regular file of bounded size: a FIFO, device or directory
// given where a file is meant is refused instead of blocking or reading without end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace taconite::vision {

// Reads `path` into `bytes`. Returns "" on success, else what is wrong ("is a FIFO, not a regular
// file", "is 80 MiB, more than the 64 MiB limit", the OS error). Opens without blocking.
std::string read_bounded_file(const std::string& path, std::uintmax_t max_bytes, std::vector<unsigned char>& bytes);

}  // namespace taconite::vision

// The lines of a file, each bounded while it is read: a line longer than the bound is refused as
// soon as that many bytes have arrived, so a file without newlines costs at most the bound in
// memory (std::getline would first read the whole line).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "taconite/error.hpp"

namespace taconite::gallery_cli {

class LineReader {
 public:
  // Reads from the open descriptor `fd` (not owned).
  LineReader(int fd, std::size_t max_line_bytes);

  // The next line, without its "\n" (and "\r"), in `line`; false at the end of the file. Input
  // error when the line is longer than the bound, Io error when a read fails.
  Result<bool> next(std::string& line);

 private:
  int fd_;
  std::size_t max_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;  // unread bytes of buffer_
  bool eof_ = false;
};

}  // namespace taconite::gallery_cli

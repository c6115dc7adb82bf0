// taconitepublish method=file: one document per line to a file, or to stdout for "-".
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "taconite/error.hpp"

namespace taconite::gst {

class JsonLinesFile {
 public:
  // Opens (creates or truncates) `location`, or takes stdout for "-". An Io error naming the file
  // and the system's reason when it cannot be opened; never waits for the reader of a FIFO (one
  // without a reader is an error).
  static Result<std::unique_ptr<JsonLinesFile>> open(const std::string& location);
  ~JsonLinesFile();
  JsonLinesFile(const JsonLinesFile&) = delete;
  JsonLinesFile& operator=(const JsonLinesFile&) = delete;

  // Writes `line` and a newline and flushes, so a reader following the file sees whole lines.
  // An Io error on a write failure (disk full, closed pipe).
  Status write_line(const std::string& line);

 private:
  JsonLinesFile(std::FILE* file, std::string location, bool owned);
  std::FILE* file_;
  std::string location_;
  bool owned_;
};

}  // namespace taconite::gst

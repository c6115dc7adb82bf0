#include "jsonl_file.hpp"

#include <cerrno>
#include <cstring>

namespace taconite::gst {

JsonLinesFile::JsonLinesFile(std::FILE* file, std::string location, bool owned)
    : file_(file), location_(std::move(location)), owned_(owned) {}

JsonLinesFile::~JsonLinesFile() {
  if (owned_) std::fclose(file_);
}

std::unique_ptr<JsonLinesFile> JsonLinesFile::open(const std::string& location, std::string* error) {
  if (location == "-") return std::unique_ptr<JsonLinesFile>(new JsonLinesFile(stdout, "stdout", false));
  std::FILE* file = std::fopen(location.c_str(), "w");
  if (!file) {
    *error = "cannot open '" + location + "' for writing: " + std::strerror(errno);
    return nullptr;
  }
  return std::unique_ptr<JsonLinesFile>(new JsonLinesFile(file, location, true));
}

bool JsonLinesFile::write_line(const std::string& line, std::string* error) {
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fputc('\n', file_) == EOF ||
      std::fflush(file_) != 0) {
    *error = "cannot write to '" + location_ + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace taconite::gst

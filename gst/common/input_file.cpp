#include "input_file.hpp"

#include "bundle/regular_file.hpp"
#include "common/failure.hpp"

namespace taconite::gst {

std::string regular_file_problem(const std::string& path) { return bundle::regular_file_problem(path); }

Result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes) {
  try {  // RegularFile opens without blocking and refuses FIFOs, devices and directories
    const bundle::RegularFile file = bundle::RegularFile::open(path);
    if (file.size() > max_bytes)
      return Error{ErrorKind::Input, "is " + std::to_string(file.size()) + " bytes, more than " +
                                         std::to_string(max_bytes)};
    std::string contents(file.size(), '\0');
    file.read_all(contents.data());
    return contents;
  } catch (const Failure& failure) {
    // Its message names the file first; our callers name it themselves.
    const std::string& message = failure.error().message;
    const std::string prefix = path + ": ";
    return Error{failure.error().kind, message.starts_with(prefix) ? message.substr(prefix.size()) : message};
  }
}

}  // namespace taconite::gst

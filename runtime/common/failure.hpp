// Inside the runtime, failures travel as a Failure exception carrying the public Error; the
// public API catches it (and anything else) at its boundary and returns it as a Result.
#pragma once

#include <exception>
#include <string>
#include <utility>

#include "taconite/error.hpp"

namespace taconite {

class Failure : public std::exception {
 public:
  Failure(ErrorKind kind, std::string message) : error_{kind, std::move(message)} {}
  const char* what() const noexcept override { return error_.message.c_str(); }
  const Error& error() const noexcept { return error_; }

 private:
  Error error_;
};

[[noreturn]] inline void fail(ErrorKind kind, std::string message) { throw Failure(kind, std::move(message)); }

}  // namespace taconite

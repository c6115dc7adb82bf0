// Errors and results of the taconite runtime. No exception crosses the public API: every
// fallible call returns a Result holding either its value or an Error.
#pragma once

#include <string>
#include <utility>
#include <variant>

// Marks the library's exported API (the library is built with hidden visibility).
#define TACONITE_API __attribute__((visibility("default")))

namespace taconite {

enum class ErrorKind {
  Io,      // a file could not be opened, read or mapped
  Bundle,  // the bundle is malformed; the message names file:line and quotes it
  Device,  // a backend or device call failed; the message names the call (and errno)
  Input,   // the caller's input is wrong; the message says what was expected and what was given
};

// "io", "bundle", "device" or "input"; a static string. Thread-safe.
TACONITE_API const char* to_string(ErrorKind kind) noexcept;

struct Error {
  ErrorKind kind;
  std::string message;
};

// Value-or-Error, owning either. Check ok() (or operator bool) before value(); error() is valid
// only when !ok(). Not synchronised: like any value, share it across threads only read-only.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const noexcept { return state_.index() == 0; }          // holds a value
  explicit operator bool() const noexcept { return ok(); }

  // The value; throws std::bad_variant_access when !ok() (the caller's bug, not a runtime error).
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }        // moves the value out
  // The error; throws std::bad_variant_access when ok().
  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

// The result of a call that returns nothing but may fail: Status(Ok{}) or an Error.
struct Ok {};
using Status = Result<Ok>;

}  // namespace taconite

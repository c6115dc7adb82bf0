// Runs a callable and converts any exception into an Error: the public API's exception wall.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <type_traits>

#include "common/failure.hpp"

namespace taconite {

template <typename Fn>
auto guarded_call(Fn&& fn) -> Result<std::invoke_result_t<Fn>> {
  try {
    return fn();
  } catch (const Failure& failure) {
    return failure.error();
  } catch (const std::bad_alloc&) {
    return Error{ErrorKind::Device, "out of memory"};
  } catch (const std::exception& e) {
    return Error{ErrorKind::Device, std::string("internal error: ") + e.what()};
  } catch (...) {
    return Error{ErrorKind::Device, "internal error: unknown exception"};
  }
}

}  // namespace taconite

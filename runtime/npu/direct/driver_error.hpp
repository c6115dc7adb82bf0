// Turns a failed driver call into Failure(Device): names the call and the errno, and adds what
// to check (spec npu-direct.md §12: driver loaded, node permissions, memlock, firmware).
#pragma once

#include <string>
#include <string_view>

namespace taconite::npu {

// "npu-direct: <call> failed: <ERRNO> (<strerror>)<detail>; <hint>"
std::string driver_error_message(std::string_view call, int error, std::string_view detail = {});
[[noreturn]] void fail_driver_call(std::string_view call, int error, std::string_view detail = {});
// The same message, thrown as ContextRefused (CREATE_HWCTX refusals the cache may retry).
[[noreturn]] void refuse_context(std::string_view call, int error, std::string_view detail = {});

}  // namespace taconite::npu

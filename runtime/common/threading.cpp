#include "common/threading.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "common/failure.hpp"
#include "taconite/embedder.hpp"

namespace taconite {

namespace {

int hardware_threads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

std::string allowed_range() {
  return "1.." + std::to_string(max_thread_count()) + ", or 0 for all " + std::to_string(hardware_threads()) +
         " hardware threads";
}

}  // namespace

int max_thread_count() { return std::max(hardware_threads(), kMaxThreads); }

int resolve_thread_count(int requested) {
  if (requested < 0 || requested > max_thread_count())
    fail(ErrorKind::Input, "threads " + std::to_string(requested) + " is out of range; allowed " + allowed_range());
  if (requested > 0) return requested;
  const char* env = std::getenv("TACONITE_THREADS");
  if (env == nullptr || *env == '\0') return hardware_threads();
  const std::string_view text(env);
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 0 || value > max_thread_count())
    fail(ErrorKind::Input,
         "TACONITE_THREADS='" + std::string(text.substr(0, 40)) + "' is not a thread count; allowed " + allowed_range());
  return value == 0 ? hardware_threads() : value;
}

}  // namespace taconite

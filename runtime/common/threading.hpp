// The cap on the thread counts the runtime's own parallel loops (OpenMP) accept
// (common/settings.hpp resolves and checks them).
#pragma once

namespace taconite {

// The largest thread count a caller may ask for: max(hardware threads, kMaxThreads).
int max_thread_count();

// Every hardware thread (at least 1).
int hardware_threads();

}  // namespace taconite

// How many threads the runtime's own parallel loops (OpenMP) use: LoadOptions::threads, else
// TACONITE_THREADS, else every core. The one place thread counts are checked.
#pragma once

namespace taconite {

// The largest thread count a caller may ask for: max(hardware threads, kMaxThreads).
int max_thread_count();

// Resolves a LoadOptions::threads value (0 = environment / all cores) to a thread count in
// 1..max_thread_count(). Throws Failure(Input) naming the value and the allowed range for a
// negative or too large request and for a TACONITE_THREADS that is not such a count.
int resolve_thread_count(int requested);

}  // namespace taconite

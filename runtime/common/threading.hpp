// How many threads the runtime's own parallel loops (OpenMP) use: LoadOptions::threads, else
// TACONITE_THREADS, else every core.
#pragma once

namespace taconite {

// Resolves a LoadOptions::threads value (0 = environment / all cores) to a thread count >= 1.
int resolve_thread_count(int requested);

}  // namespace taconite

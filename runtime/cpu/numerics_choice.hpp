// `precision = auto` on the cpu backend: which numerics run is measured at load, not guessed from
// the ISA. oneDNN 2.6's bf16 convs were ~2x faster than f32 on a Zen 4 with AVX512-BF16 but ~1.7x
// slower on an Intel Xeon with the same ISA flags (no AMX), so no per-ISA rule holds. The backend
// builds each candidate's batch-1 network (with placeholder weights: cpu/weight_store.hpp), times a
// few warm forwards of each, interleaved, and builds the fastest for real (cpu_executor.cpp). The
// timing loop and the decision are here, without oneDNN.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace taconite::cpu {

enum class ComputeType { F32, Bf16, Int8 };

std::string_view to_string(ComputeType type);

struct CandidateTimes {
  ComputeType type;
  std::vector<double> ms;  // one per timed round
  bool winograd = false;   // f32's Winograd variant (cpu/fused_graph.hpp: make_winograd_variant)
};

struct NumericsChoice {
  ComputeType type;
  bool winograd = false;
  std::string reason;  // e.g. "auto: bf16, measured fastest (batch-1 forward, median of 5 interleaved rounds: f32 24.1 ms, f32-winograd 17.0 ms, bf16 11.9 ms)"
};

// f32 (direct convs) is the most accurate and frugal numerics, so another candidate must beat it
// by more than this fraction of its median: a near tie (noise on a shared machine) keeps f32.
inline constexpr double kBeatF32By = 0.03;

// The candidate with the lowest median, subject to kBeatF32By. `candidates` is non-empty, holds
// F32 (direct), and every candidate has at least one time.
NumericsChoice choose_numerics(std::span<const CandidateTimes> candidates);

struct RaceLimits {
  int min_rounds = 3;         // unless decided earlier
  int max_rounds = 9;
  double budget_s = 0.3;      // no round starts after this much timed time
  int decisive_rounds = 2;    // after this many rounds, outpaced(times, decisive_ratio) candidates stop
  double decisive_ratio = 1.5;
};

// Per candidate: true when its fastest time is at least `ratio` times another candidate's slowest,
// so more rounds could not make it the choice (e.g. emulated bf16, 3x slower than f32). A candidate
// without times is never outpaced and outpaces nothing.
std::vector<bool> outpaced(const std::vector<std::vector<double>>& times, double ratio);

// Runs every forward once untimed (warm-up), then timed rounds of one forward per candidate still
// running, the order alternating between rounds, until max_rounds, or after min_rounds the budget
// is spent. After decisive_rounds, outpaced candidates stop running, and the race ends when one is
// left. Returns the times in ms, per candidate, in the order given.
std::vector<std::vector<double>> race(std::span<const std::function<void()>> forwards, const RaceLimits& limits);

}  // namespace taconite::cpu

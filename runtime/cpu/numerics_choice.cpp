#include "cpu/numerics_choice.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "taconite/model.hpp"

namespace taconite::cpu {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string name(const CandidateTimes& candidate) {
  return std::string(to_string(candidate.type)) + (candidate.winograd ? "-winograd" : "");
}

std::string ms(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f ms", value);
  return text;
}

}  // namespace

std::string_view to_string(ComputeType type) {
  switch (type) {
    case ComputeType::Bf16: return kPrecisionBf16;
    case ComputeType::Int8: return kPrecisionInt8;
    case ComputeType::F32: break;
  }
  return kPrecisionF32;
}

NumericsChoice choose_numerics(std::span<const CandidateTimes> candidates) {
  std::vector<double> medians;
  std::size_t f32 = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    medians.push_back(median(candidates[i].ms));
    if (candidates[i].type == ComputeType::F32 && !candidates[i].winograd) f32 = i;
  }
  std::size_t best = f32;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (medians[i] < medians[best] && medians[i] < medians[f32] * (1.0 - kBeatF32By)) best = i;

  std::size_t rounds = 0;
  for (const CandidateTimes& candidate : candidates) rounds = std::max(rounds, candidate.ms.size());
  std::string times;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::size_t ran = candidates[i].ms.size();
    times += (i == 0 ? "" : ", ") + name(candidates[i]) + " " + ms(medians[i]) +
             (ran < rounds ? " (" + std::to_string(ran) + " rounds: outpaced)" : "");
  }
  const CandidateTimes& chosen = candidates[best];
  const std::string verdict = best != f32 ? "measured fastest"
                              : candidates.size() == 1  ? "the only candidate"
                                                        : "no other candidate measured more than " +
                                                             std::to_string(static_cast<int>(kBeatF32By * 100)) + " % faster";
  return {chosen.type, chosen.winograd, "auto: " + name(chosen) + ", " + verdict + " (batch-1 forward, median of " +
                    std::to_string(rounds) + " interleaved rounds: " + times + ")"};
}

std::vector<bool> outpaced(const std::vector<std::vector<double>>& times, double ratio) {
  std::vector<bool> out(times.size(), false);
  for (std::size_t a = 0; a < times.size(); ++a)
    for (std::size_t b = 0; b < times.size() && !times[a].empty(); ++b)
      if (b != a && !times[b].empty() &&
          *std::max_element(times[b].begin(), times[b].end()) * ratio <= *std::min_element(times[a].begin(), times[a].end()))
        out[a] = true;
  return out;
}

std::vector<std::vector<double>> race(std::span<const std::function<void()>> forwards, const RaceLimits& limits) {
  using Clock = std::chrono::steady_clock;
  for (const auto& forward : forwards) forward();
  std::vector<std::vector<double>> times(forwards.size());
  std::vector<bool> stopped(forwards.size(), false);
  double spent = 0.0;
  for (int round = 0; round < limits.max_rounds && (round < limits.min_rounds || spent < limits.budget_s); ++round) {
    if (round >= limits.decisive_rounds) {
      const std::vector<bool> out = outpaced(times, limits.decisive_ratio);
      for (std::size_t i = 0; i < out.size(); ++i) stopped[i] = stopped[i] || out[i];
      if (std::count(stopped.begin(), stopped.end(), false) <= 1) break;
    }
    for (std::size_t k = 0; k < forwards.size(); ++k) {
      const std::size_t i = round % 2 == 0 ? k : forwards.size() - 1 - k;
      if (stopped[i]) continue;
      const auto start = Clock::now();
      forwards[i]();
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      spent += seconds;
      times[i].push_back(seconds * 1e3);
    }
  }
  return times;
}

}  // namespace taconite::cpu

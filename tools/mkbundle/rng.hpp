// A small seeded generator with a fixed algorithm (SplitMix64 + Box-Muller), so a given --seed
// writes the same bundle on every standard library.
#pragma once

#include <cmath>
#include <cstdint>

namespace taconite::mkbundle {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next_u64() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform(), u2 = uniform();  // u1 in (0, 1]
    const double r = std::sqrt(-2.0 * std::log(u1)), a = 6.283185307179586 * u2;
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
  }

  // An independent stream for a sub-task (keeps parameter draws stable when one part changes).
  Rng fork(std::uint64_t salt) { return Rng(next_u64() ^ (salt * 0xD1B54A32D192ED03ull)); }

 private:
  std::uint64_t state_;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace taconite::mkbundle

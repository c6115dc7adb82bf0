#include "open_set_scores.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "exact_scan.hpp"
#include "gallery_index.hpp"
#include "simd_dot.hpp"

namespace taconite::gallery {

struct OpenSetScores::State {
  int dim = 0;
  std::vector<float> rows;                           // unit embeddings, row-major
  std::vector<std::uint32_t> group;                  // per row: its identity's dense index
  std::vector<std::vector<std::size_t>> members;     // per identity: its rows
  std::unique_ptr<ExactScan> scan;                   // groups = identities
};

OpenSetScores::OpenSetScores(std::unique_ptr<State> state) : state_(std::move(state)) {}
OpenSetScores::OpenSetScores(OpenSetScores&&) noexcept = default;
OpenSetScores& OpenSetScores::operator=(OpenSetScores&&) noexcept = default;
OpenSetScores::~OpenSetScores() = default;

int OpenSetScores::dim() const { return state_->dim; }

Result<OpenSetScores> OpenSetScores::build(int dim, std::vector<float> unit_rows,
                                           std::vector<std::int64_t> identity_ids) {
  if (dim < 1 || unit_rows.size() != identity_ids.size() * static_cast<std::size_t>(dim))
    return Error{ErrorKind::Input, "open-set scores: " + std::to_string(unit_rows.size()) + " values are not " +
                                       std::to_string(identity_ids.size()) + " rows of " + std::to_string(dim)};
  for (std::size_t i = 0; i < unit_rows.size(); ++i)
    if (!std::isfinite(unit_rows[i]))
      return Error{ErrorKind::Input, "open-set scores: row " + std::to_string(i / static_cast<std::size_t>(dim)) +
                                         " holds NaN or Inf"};
  auto state = std::make_unique<State>();
  state->dim = dim;
  state->rows = std::move(unit_rows);
  std::map<std::int64_t, std::uint32_t> dense;
  for (std::size_t row = 0; row < identity_ids.size(); ++row) {
    const auto [it, added] = dense.try_emplace(identity_ids[row], static_cast<std::uint32_t>(dense.size()));
    if (added) state->members.emplace_back();
    state->group.push_back(it->second);
    state->members[it->second].push_back(row);
  }
  state->scan = std::make_unique<ExactScan>(dim, state->rows, state->group);
  return OpenSetScores(std::move(state));
}

LeaveOneOut OpenSetScores::leave_one_out(std::size_t max_probes) const {
  const State& s = *state_;
  const auto d = static_cast<std::size_t>(s.dim);
  std::vector<std::size_t> eligible;
  for (std::size_t row = 0; row < s.group.size(); ++row)
    if (s.members[s.group[row]].size() >= 2) eligible.push_back(row);
  LeaveOneOut out;
  out.eligible = eligible.size();
  const std::size_t count = std::min(eligible.size(), max_probes);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t row = eligible[i * eligible.size() / count];
    const float* probe = s.rows.data() + row * d;
    GenuineProbe p;
    // Its own identity, itself left out: the best of the identity's other rows.
    bool first = true;
    for (std::size_t other : s.members[s.group[row]]) {
      if (other == row) continue;
      const float score = dot_f32(probe, s.rows.data() + other * d, d);
      p.true_best = first ? score : std::max(p.true_best, score);
      first = false;
    }
    // The best other identity is among the best two identities: only its own can rank above it.
    for (const auto& [score, best_row] : s.scan->top(std::span(probe, d), 2))
      if (s.group[static_cast<std::size_t>(best_row)] != s.group[row]) {
        p.wrong_best = score;
        break;
      }
    out.probes.push_back(p);
  }
  return out;
}

std::optional<float> OpenSetScores::best_score(std::span<const float> embedding) const {
  const State& s = *state_;
  if (embedding.size() != static_cast<std::size_t>(s.dim) || s.group.empty() || !finite_query(embedding) ||
      std::all_of(embedding.begin(), embedding.end(), [](float v) { return v == 0.0f; }))
    return std::nullopt;
  // Normalised as taconiteidentify's search normalises a face's embedding.
  const auto top = s.scan->top(unit_query(embedding), 1);
  if (top.empty()) return std::nullopt;
  return top.front().first;
}

}  // namespace taconite::gallery

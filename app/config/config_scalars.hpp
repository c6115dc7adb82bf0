// The config's scalar rules, without YAML: numbers, booleans, paths, suggestions for a typo.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace taconite::app {

// A whole decimal integer (optional sign, digits only), or nullopt.
std::optional<long long> parse_integer(std::string_view text);
// A finite decimal number (no hex, inf or nan), or nullopt.
std::optional<double> parse_number(std::string_view text);
// true/false (also True/TRUE, False/FALSE), or nullopt: YAML 1.1's yes/no/on/off are refused as ambiguous.
std::optional<bool> parse_boolean(std::string_view text);

// The candidate closest to `wrong` by edit distance when it is close enough to be a typo, else "".
std::string closest_name(std::string_view wrong, const std::vector<std::string>& candidates);

// `path` made absolute against `base_dir` (lexically normalised); an absolute one only normalised.
std::string resolve_path(const std::string& path, const std::string& base_dir);

// True for postgresql:// and postgres:// locations (kept as they are, not resolved as paths).
bool is_postgres_location(std::string_view gallery);

// True for addresses only this machine reaches: 127.0.0.0/8, ::1, localhost.
bool is_loopback_host(std::string_view host);

}  // namespace taconite::app

// Reads taconite-run's YAML config and validates all of it before anything starts. Never throws,
// never prints. Each error is one line "FILE:LINE: KEY: message", KEY a dotted path
// (cameras.door1.detect_interval); all errors of the file are collected (at most kMaxErrors).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config.hpp"

namespace taconite::app {

inline constexpr std::size_t kMaxErrors = 50;

struct ConfigLoad {
  std::optional<Config> config;  // set when `errors` is empty
  std::vector<std::string> errors;
  // Files the config names that are not there (model, detector, gallery's directory, credentials,
  // TLS files, a file:// camera): "FILE:LINE: KEY: ... does not exist". taconite-run refuses to
  // start with any; --check only warns (an example config names files of another machine).
  std::vector<std::string> missing_files;
};

// Reads `path` (at most kMaxConfigBytes) and parses it; relative paths are taken relative to the
// directory of `path`.
ConfigLoad load_config(const std::string& path);

// Parses `text` as if read from `file`, relative paths resolved against `base_dir`.
ConfigLoad parse_config(const std::string& text, const std::string& file, const std::string& base_dir);

// The camera name rule: 1..kMaxCameraName characters of [a-z0-9_-].
bool valid_camera_name(const std::string& name);

}  // namespace taconite::app

// Every key taconite-run's config accepts, declared once: the parser takes the allowed keys and the
// numeric bounds from here, and a test checks that docs/app.md's config reference lists exactly
// these keys. A camera key is listed once as `cameras.<name>.KEY`; `defaults.KEY` takes the same
// keys (but `uri` and `device`).
#pragma once

#include <string_view>
#include <vector>

namespace taconite::app {

enum class KeyType { String, Path, Boolean, Integer, Number, Section, CameraMap };

struct ConfigKey {
  std::string_view path;  // dotted: "mqtt.tls.ca_file", "cameras.<name>.detect_interval"
  KeyType type;
  std::string_view default_text;  // as docs/app.md shows it
  double min = 0, max = 0;        // Integer and Number: inclusive bounds
  std::string_view meaning;
};

// In file order of docs/app.md's reference. Thread-safe (a constant).
const std::vector<ConfigKey>& config_keys();

// The key at `path` (a camera key under "cameras.<name>." or "defaults."), or null.
const ConfigKey* find_config_key(std::string_view path);

// "string", "path", "boolean", "integer", "number", "section", "map of cameras".
std::string_view key_type_name(KeyType type);

// The limits that are no single key's.
inline constexpr std::size_t kMaxConfigBytes = 1u << 20;  // the file
inline constexpr std::size_t kMaxCameras = 64;
inline constexpr std::size_t kMaxCameraName = 64;
inline constexpr std::size_t kMaxStringBytes = 4096;  // any string value (paths, URIs, hosts)

}  // namespace taconite::app

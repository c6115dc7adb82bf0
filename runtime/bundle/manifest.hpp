// manifest.txt (spec §2): records split on ASCII whitespace, k=v fields, and the container's
// own version/param/xclbin records. Knows nothing about what the steps mean.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace taconite::bundle {

inline constexpr std::string_view kManifestFile = "manifest.txt";
inline constexpr int kSupportedVersion = 1;

struct ManifestRecord {
  int line = 0;
  std::string text;                 // the whole line, as written
  std::string tag;                  // first token
  std::vector<std::string> fields;  // every later token

  // The value of field `key=...` (split at the first '='), or nullptr. The first match wins.
  const std::string* find(std::string_view key) const;

  // Each of these throws Failure(Bundle) naming manifest.txt:<line> and quoting it.
  std::string require(std::string_view key) const;
  std::int64_t require_int(std::string_view key, std::int64_t min, std::int64_t max) const;
  bool require_flag(std::string_view key) const;  // k=0 / k=1, anything else is an error
  [[noreturn]] void fail_here(std::string_view problem) const;
};

struct XclbinRecord {
  std::string key;
  std::string file;         // as written, relative to the bundle
  std::string kernel_name;
  int line = 0;
  std::string text;
};

struct ParamRecord {
  std::string value;  // rest of the line, inner spacing kept
  int line = 0;
  std::string text;   // the whole line, for errors about the value
};

struct Manifest {
  int version = 0;
  std::map<std::string, ParamRecord, std::less<>> params;
  std::map<std::string, XclbinRecord, std::less<>> xclbins;
  std::vector<ManifestRecord> steps;  // every other record, in file order
};

// Parses and checks the container rules of spec §2 (version, duplicates, field counts).
Manifest parse_manifest(std::string_view text);

}  // namespace taconite::bundle

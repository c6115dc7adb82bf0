#include "bundle/manifest.hpp"

#include <limits>

#include "bundle/text_lines.hpp"
#include "common/failure.hpp"

namespace taconite::bundle {

const std::string* ManifestRecord::find(std::string_view key) const {
  for (const std::string& field : fields) {
    const std::size_t eq = field.find('=');
    if (eq != std::string::npos && std::string_view(field).substr(0, eq) == key) return &field;
  }
  return nullptr;
}

void ManifestRecord::fail_here(std::string_view problem) const {
  fail(ErrorKind::Bundle, located_message(kManifestFile, line, text, problem));
}

std::string ManifestRecord::require(std::string_view key) const {
  const std::string* field = find(key);
  if (field == nullptr) fail_here("missing key '" + std::string(key) + "' in " + tag + " record");
  return field->substr(field->find('=') + 1);
}

std::int64_t ManifestRecord::require_int(std::string_view key, std::int64_t min, std::int64_t max) const {
  const std::string text_value = require(key);
  std::string_view digits = text_value;
  const bool negative = !digits.empty() && digits.front() == '-';
  if (negative) digits.remove_prefix(1);
  std::uint64_t magnitude = 0;
  const auto limit = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (!parse_u64(digits, limit, magnitude))
    fail_here("key '" + std::string(key) + "' must be an integer, got '" + text_value + "'");
  const std::int64_t value = negative ? -static_cast<std::int64_t>(magnitude) : static_cast<std::int64_t>(magnitude);
  if (value < min || value > max)
    fail_here("key '" + std::string(key) + "' = " + text_value + " is out of range [" + std::to_string(min) + ", " +
              std::to_string(max) + "]");
  return value;
}

bool ManifestRecord::require_flag(std::string_view key) const {
  const std::string value = require(key);
  if (value == "0") return false;
  if (value == "1") return true;
  fail_here("flag '" + std::string(key) + "' must be 0 or 1, got '" + value + "'");
}

namespace {

ManifestRecord make_record(const TextLine& line, const std::vector<std::string_view>& tokens) {
  ManifestRecord record;
  record.line = line.number;
  record.text = std::string(line.text);
  record.tag = std::string(tokens.front());
  for (std::size_t i = 1; i < tokens.size(); ++i) record.fields.emplace_back(tokens[i]);
  return record;
}

void read_version(const ManifestRecord& record, Manifest& manifest, int& version_line) {
  if (version_line != 0)
    record.fail_here("second version record (the first is at line " + std::to_string(version_line) + ")");
  if (record.fields.size() != 1) record.fail_here("version record takes exactly one value");
  std::uint64_t version = 0;
  if (!parse_u64(record.fields[0], 1u << 30, version)) record.fail_here("version must be a non-negative integer");
  if (version != static_cast<std::uint64_t>(kSupportedVersion))
    record.fail_here("version " + record.fields[0] + ", this runtime reads version " +
                     std::to_string(kSupportedVersion) + "; re-export the bundle");
  manifest.version = static_cast<int>(version);
  version_line = record.line;
}

void read_param(const ManifestRecord& record, const TextLine& line, Manifest& manifest) {
  if (record.fields.empty()) record.fail_here("param record needs a name");
  const std::string& name = record.fields[0];
  if (auto it = manifest.params.find(name); it != manifest.params.end())
    record.fail_here("param '" + name + "' defined twice (first at line " + std::to_string(it->second.line) + ")");
  // The value is the rest of the line after the name, inner spacing kept.
  std::string_view rest = trim_ascii_whitespace(line.text);
  rest.remove_prefix(rest.find(record.tag) + record.tag.size());
  rest = trim_ascii_whitespace(rest);
  rest.remove_prefix(name.size());
  manifest.params.emplace(name, ParamRecord{std::string(trim_ascii_whitespace(rest)), record.line, record.text});
}

void read_xclbin(const ManifestRecord& record, Manifest& manifest) {
  if (record.fields.size() < 3) record.fail_here("xclbin record needs <key> <file> <kernel-name>");
  const std::string& key = record.fields[0];
  if (auto it = manifest.xclbins.find(key); it != manifest.xclbins.end())
    record.fail_here("xclbin '" + key + "' defined twice (first at line " + std::to_string(it->second.line) + ")");
  manifest.xclbins.emplace(key, XclbinRecord{key, record.fields[1], record.fields[2], record.line, record.text});
}

}  // namespace

Manifest parse_manifest(std::string_view text) {
  Manifest manifest;
  int version_line = 0;
  for (const TextLine& line : split_lines(text)) {
    const std::vector<std::string_view> tokens = split_ascii_whitespace(line.text);
    if (tokens.empty() || tokens.front().front() == '#') continue;
    ManifestRecord record = make_record(line, tokens);
    if (record.tag == "version") {
      read_version(record, manifest, version_line);
    } else if (record.tag == "param") {
      read_param(record, line, manifest);
    } else if (record.tag == "xclbin") {
      read_xclbin(record, manifest);
    } else {
      manifest.steps.push_back(std::move(record));
    }
  }
  if (version_line == 0)
    fail(ErrorKind::Bundle, std::string(kManifestFile) + ": no version record (this runtime reads version " +
                                std::to_string(kSupportedVersion) + ")");
  return manifest;
}

}  // namespace taconite::bundle

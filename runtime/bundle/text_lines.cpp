#include "bundle/text_lines.hpp"

#include <charconv>
#include <sstream>

#include "bundle/regular_file.hpp"
#include "common/failure.hpp"

namespace taconite::bundle {

namespace {
bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
constexpr std::size_t kMaxQuoted = 160;
}  // namespace

std::vector<TextLine> split_lines(std::string_view text) {
  std::vector<TextLine> lines;
  int number = 1;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte-order mark is not content
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back({number++, line});
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::vector<std::string_view> split_ascii_whitespace(std::string_view text) {
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_ascii_space(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && !is_ascii_space(text[i])) ++i;
    if (i > start) tokens.push_back(text.substr(start, i - start));
  }
  return tokens;
}

std::string_view trim_ascii_whitespace(std::string_view text) {
  while (!text.empty() && is_ascii_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_ascii_space(text.back())) text.remove_suffix(1);
  return text;
}

std::string located_message(std::string_view file, int line, std::string_view line_text, std::string_view problem) {
  std::string quoted(line_text.substr(0, kMaxQuoted));
  if (line_text.size() > kMaxQuoted) quoted += "...";
  for (char& c : quoted)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') c = '?';
  std::ostringstream out;
  out << file << ':' << line << ": " << problem << ": \"" << quoted << '"';
  return out.str();
}

bool parse_u64(std::string_view text, std::uint64_t max, std::uint64_t& value) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return false;
  std::uint64_t parsed = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed, 10);
  if (ec != std::errc{} || end != text.data() + text.size() || parsed > max) return false;
  value = parsed;
  return true;
}

std::string read_text_file(const std::filesystem::path& path) {
  const RegularFile file = RegularFile::open(path);
  if (file.size() > kMaxTextFileBytes)
    fail(ErrorKind::Bundle, path.string() + ": " + std::to_string(file.size()) +
                                " bytes; a bundle text file may hold at most " + std::to_string(kMaxTextFileBytes) +
                                " bytes (" + std::to_string(kMaxTextFileBytes >> 20) + " MiB)");
  std::string text(static_cast<std::size_t>(file.size()), '\0');
  file.read_all(text.data());
  return text;
}

}  // namespace taconite::bundle

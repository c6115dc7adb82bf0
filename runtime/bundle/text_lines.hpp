// Line splitting and record locations shared by the manifest and tensor-index parsers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace taconite::bundle {

struct TextLine {
  int number;             // 1-based
  std::string_view text;  // without the line terminator
};

std::vector<TextLine> split_lines(std::string_view text);
std::vector<std::string_view> split_ascii_whitespace(std::string_view text);
std::string_view trim_ascii_whitespace(std::string_view text);

// "manifest.txt:12: <problem>: \"<line text>\"" (long lines are shortened).
std::string located_message(std::string_view file, int line, std::string_view line_text, std::string_view problem);

// Parses a decimal unsigned integer with no sign, no spaces and no overflow past `max`.
bool parse_u64(std::string_view text, std::uint64_t max, std::uint64_t& value);

std::string read_text_file(const std::string& path);  // throws Failure(Io)

}  // namespace taconite::bundle

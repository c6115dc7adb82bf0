// Line splitting and record locations shared by the manifest and tensor-index parsers.
#pragma once

#include <cstdint>
#include <filesystem>
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

// A bundle's text files (manifest.txt, tensors.txt) are read whole; real ones are far smaller
// (IR-101: tens of KiB), so a larger file is refused before anything is allocated for it.
inline constexpr std::uint64_t kMaxTextFileBytes = std::uint64_t{16} << 20;

// Throws Failure(Io) naming the file and what is wrong with it, Failure(Bundle) when it holds
// more than kMaxTextFileBytes.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace taconite::bundle

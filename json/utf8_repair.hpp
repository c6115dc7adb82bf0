// Text that must be UTF-8 (JSON strings, names) mended rather than refused: every ill-formed
// sequence becomes U+FFFD, one for each maximal subpart (Unicode 15 §3.9, "U+FFFD Substitution of
// Maximal Subparts", what browsers and Python's errors="replace" do). Ill-formed: a lone
// continuation byte, a sequence cut short, an overlong form (C0, C1, E0 80.., F0 80..), a UTF-16
// surrogate (ED A0..ED BF) and anything above U+10FFFF (F4 90.., F5..FF).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace taconite::json {

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// The sequence starting at `text[at]` (at < text.size()): `length` bytes (1..4) that are one
// well-formed character, or, when !well_formed, `length` bytes (1..3) to replace by one U+FFFD.
struct Utf8Sequence {
  std::size_t length = 1;
  bool well_formed = true;
};
Utf8Sequence utf8_sequence_at(std::string_view text, std::size_t at);

// `text` with every ill-formed sequence replaced; `replaced` (when not null) gets how many were.
std::string repaired_utf8(std::string_view text, std::size_t* replaced = nullptr);

}  // namespace taconite::json

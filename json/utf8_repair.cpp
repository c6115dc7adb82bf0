#include "utf8_repair.hpp"

namespace taconite::json {

Utf8Sequence utf8_sequence_at(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return {1, true};
  // Table 3-7 of the Unicode standard: the continuation bytes a lead byte allows. The narrower
  // second-byte ranges exclude overlongs (E0, F0), surrogates (ED) and code points past U+10FFFF (F4).
  std::size_t continuations = 0;
  unsigned char low = 0x80, high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    continuations = 1;
  } else if (lead == 0xE0) {
    continuations = 2, low = 0xA0;
  } else if (lead == 0xED) {
    continuations = 2, high = 0x9F;
  } else if (lead >= 0xE1 && lead <= 0xEF) {
    continuations = 2;
  } else if (lead == 0xF0) {
    continuations = 3, low = 0x90;
  } else if (lead == 0xF4) {
    continuations = 3, high = 0x8F;
  } else if (lead >= 0xF1 && lead <= 0xF3) {
    continuations = 3;
  } else {
    return {1, false};  // a continuation byte without a lead, C0, C1 or F5..FF: never in UTF-8
  }
  for (std::size_t i = 1; i <= continuations; ++i) {
    // The maximal subpart ends before the first byte that cannot continue it (or at the end).
    if (at + i >= text.size() || byte(at + i) < low || byte(at + i) > high) return {i, false};
    low = 0x80, high = 0xBF;
  }
  return {continuations + 1, true};
}

std::string repaired_utf8(std::string_view text, std::size_t* replaced) {
  std::string out;
  out.reserve(text.size());
  std::size_t count = 0;
  for (std::size_t at = 0; at < text.size();) {
    const Utf8Sequence sequence = utf8_sequence_at(text, at);
    if (sequence.well_formed) {
      out.append(text.substr(at, sequence.length));
    } else {
      out.append(kReplacementCharacter);
      ++count;
    }
    at += sequence.length;
  }
  if (replaced) *replaced = count;
  return out;
}

}  // namespace taconite::json

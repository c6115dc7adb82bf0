#include "displayed_location.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace taconite::gallery {

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

bool is_key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

bool has_word_at(std::string_view text, std::size_t at, std::string_view word) {
  if (text.size() - at < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[at + i])) != word[i]) return false;
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A URI part as libpq decodes it (%XX escapes).
std::string percent_decoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// A keyword value as libpq reads it: without its quotes, a backslash escaping the next character.
std::string unescaped(std::string_view s) {
  if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') s = s.substr(1, s.size() - 2);
  else if (!s.empty() && s.front() == '\'') s.remove_prefix(1);  // an unterminated quote
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) ++i;
    out += s[i];
  }
  return out;
}

// Where a password is written in a text: [begin, end), and in which form.
struct Span {
  std::size_t begin = 0, end = 0;
  bool uri = false;  // percent-encoded (user-info, query parameter), else a keyword value
};

// The end of a URI part starting at `at`: the first of `stops`, a space or a quote.
std::size_t uri_part_end(std::string_view text, std::size_t at, std::string_view stops) {
  while (at < text.size() && stops.find(text[at]) == std::string_view::npos && !is_space(text[at]) &&
         text[at] != '"' && text[at] != '\'')
    ++at;
  return at;
}

// A keyword value starting at `at` as libpq reads it: quoted to the closing quote, else to the
// next space; a backslash escapes the next character.
std::size_t keyword_value_end(std::string_view text, std::size_t at) {
  const bool quoted = at < text.size() && text[at] == '\'';
  std::size_t end = quoted ? at + 1 : at;
  while (end < text.size() && (quoted ? text[end] != '\'' : !is_space(text[end]))) end += text[end] == '\\' ? 2 : 1;
  if (quoted && end < text.size()) ++end;  // the closing quote
  return std::min(end, text.size());
}

// Every password written in `text` (also in words around it: a message quoting a connection
// string). `...password=` covers libpq's sslpassword too.
std::vector<Span> password_spans(std::string_view text) {
  std::vector<Span> spans;
  for (std::size_t i = 0; i < text.size(); ++i) {
    for (std::string_view scheme : {"postgresql://", "postgres://"}) {
      if (!has_word_at(text, i, scheme)) continue;
      // libpq: the user-info ends at the first '@' before any '/'; the password follows its first ':'.
      const std::size_t start = i + scheme.size(), end = uri_part_end(text, start, "@/");
      const std::size_t colon = text.find(':', start);
      if (end < text.size() && text[end] == '@' && colon < end) spans.push_back({colon + 1, end, true});
      break;
    }
    if (!has_word_at(text, i, "password")) continue;
    std::size_t value = i + 8;
    while (value < text.size() && is_space(text[value])) ++value;
    if (value >= text.size() || text[value] != '=') continue;
    ++value;
    std::size_t key = i;
    while (key > 0 && is_key_char(text[key - 1])) --key;
    if (key > 0 && (text[key - 1] == '?' || text[key - 1] == '&')) {  // a URI query parameter
      spans.push_back({value, uri_part_end(text, value, "&#"), true});
      continue;
    }
    while (value < text.size() && is_space(text[value])) ++value;
    spans.push_back({value, keyword_value_end(text, value), false});
  }
  return spans;
}

// Replaces every occurrence of `secret` in `text`.
void replace_all(std::string& text, const std::string& secret) {
  if (secret.empty()) return;
  for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + kMaskedSecret.size()))
    text.replace(at, secret.size(), kMaskedSecret);
}

}  // namespace

std::string mask_secrets(std::string_view text, std::string_view location) {
  // The passwords `location` holds, as written and as libpq reads them; the longest first, so
  // that a password holding another is masked whole.
  std::vector<std::string> secrets;
  for (const Span& s : password_spans(location)) {
    const std::string_view written = location.substr(s.begin, s.end - s.begin);
    secrets.emplace_back(written);
    secrets.push_back(s.uri ? percent_decoded(written) : unescaped(written));
  }
  std::sort(secrets.begin(), secrets.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  std::string masked(text);
  for (const std::string& secret : secrets)
    if (secret != kMaskedSecret) replace_all(masked, secret);

  // Then whatever else reads as a password (a message quoting another connection string).
  std::vector<Span> spans = password_spans(masked);
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::string shown;
  std::size_t copied = 0;
  for (const Span& s : spans) {
    if (s.end <= copied || s.end == s.begin) continue;
    const std::size_t begin = std::max(s.begin, copied);
    shown.append(masked, copied, begin - copied).append(kMaskedSecret);
    copied = s.end;
  }
  shown.append(masked, copied, std::string::npos);
  return shown;
}

std::string displayed_location(std::string_view location) { return mask_secrets(location, location); }

}  // namespace taconite::gallery

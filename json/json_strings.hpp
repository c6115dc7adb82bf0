// Scanning raw JSON text outside its strings (the pre-parse checks of json_parse, the mending of
// numbers json-glib 1.6 wrote): one place that knows where a double-quoted string starts and ends.
#pragma once

namespace taconite::json {

// Fed the characters of JSON text in order, says which belong to a string (its quotes included,
// backslash escapes followed).
class StringTracker {
 public:
  bool inside(char c) {
    if (in_string_) {
      if (escaped_)
        escaped_ = false;
      else if (c == '\\')
        escaped_ = true;
      else if (c == '"')
        in_string_ = false;
      return true;
    }
    in_string_ = c == '"';
    return in_string_;
  }

 private:
  bool in_string_ = false;
  bool escaped_ = false;
};

}  // namespace taconite::json

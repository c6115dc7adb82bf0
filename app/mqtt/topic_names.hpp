// Names from outside (camera names from the config, person names from the gallery) made safe for
// MQTT topics and Home Assistant ids. Person names are hostile input: anything a user typed.
#pragma once

#include <cstddef>
#include <string>

namespace taconite::app {

// Longest slug: the readable part is cut here, then a hash may follow ("_" + 8 hex digits).
inline constexpr std::size_t kMaxSlugStem = 32;
// Longest camera name used as a topic level, and longest person name accepted, in bytes.
inline constexpr std::size_t kMaxCameraNameBytes = 64;
inline constexpr std::size_t kMaxPersonNameBytes = 256;

// A slug of `name`: [a-z0-9_] only (ASCII letters lowered, every other run of bytes one "_"), at
// most kMaxSlugStem characters, then "_" and 8 hex digits of a hash of the exact name whenever the
// slug alone could not tell names apart: the name was not already lower-case [a-z0-9_], was cut,
// or its slug is one of `reserved` (comma-separated, e.g. a camera's own topic levels). So "alice"
// stays "alice", "Jean-Luc" becomes "jean_luc_" + hash, and two names share a slug only by a
// hash collision (callers still check). Never empty.
std::string slug(const std::string& name, const std::string& reserved = "");

// Why `camera` cannot be one topic level of ours ("" when it can): empty, longer than
// kMaxCameraNameBytes, or holding '/', '+', '#', a control character or bytes that are not UTF-8.
std::string camera_name_problem(const std::string& camera);

// `name` for a log line: at most `max_bytes` (then "..."), control characters as '?', so a hostile
// name cannot forge or split log lines.
std::string printable(const std::string& name, std::size_t max_bytes = 64);

}  // namespace taconite::app

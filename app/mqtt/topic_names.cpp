#include "topic_names.hpp"

#include <glib.h>

#include <cstdint>
#include <cstdio>
#include <sstream>

namespace taconite::app {

namespace {

// FNV-1a, 32 bits: stable across runs and builds, so a person keeps her topics and ids.
std::uint32_t fnv1a(const std::string& text) {
  std::uint32_t h = 2166136261u;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

bool is_reserved(const std::string& stem, const std::string& reserved) {
  std::istringstream words(reserved);
  std::string word;
  while (std::getline(words, word, ','))
    if (word == stem) return true;
  return false;
}

}  // namespace

std::string slug(const std::string& name, const std::string& reserved) {
  std::string stem;
  bool changed = false;
  for (const char raw : name) {
    const unsigned char c = static_cast<unsigned char>(raw);
    char out = 0;
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
      out = static_cast<char>(c);
    } else if (c >= 'A' && c <= 'Z') {
      out = static_cast<char>(c - 'A' + 'a');
      changed = true;
    } else {
      changed = true;
      if (!stem.empty() && stem.back() == '_') continue;  // one "_" per run of other bytes
      out = '_';
    }
    if (stem.size() == kMaxSlugStem) {
      changed = true;
      break;
    }
    stem.push_back(out);
  }
  if (stem.empty()) changed = true;
  if (!changed && !is_reserved(stem, reserved)) return stem;
  char hash[16];
  std::snprintf(hash, sizeof(hash), "%08x", static_cast<unsigned>(fnv1a(name)));
  return stem.empty() ? std::string("x") + hash : stem + "_" + hash;
}

std::string camera_name_problem(const std::string& camera) {
  if (camera.empty()) return "the name is empty";
  if (camera.size() > kMaxCameraNameBytes)
    return "the name is longer than " + std::to_string(kMaxCameraNameBytes) + " bytes";
  if (!g_utf8_validate(camera.data(), static_cast<gssize>(camera.size()), nullptr)) return "the name is not UTF-8";
  for (const char c : camera) {
    if (c == '/' || c == '+' || c == '#')
      return std::string("the name holds '") + c + "' (an MQTT topic separator or wildcard)";
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "the name holds a control character";
  }
  return "";
}

std::string printable(const std::string& name, std::size_t max_bytes) {
  std::string out;
  for (const char c : name) {
    if (out.size() >= max_bytes) return out + "...";
    const unsigned char u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? '?' : c);
  }
  return out;
}

}  // namespace taconite::app
